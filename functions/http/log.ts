/**
 * Terse JSON log lines (CloudWatch bills by the byte). Callers pass fields explicitly; nothing
 * logs whole events or headers, so tokens and Authorization headers never reach a log.
 */
export type Logger = (message: string, fields?: Record<string, unknown>) => void;

export const jsonLogger =
  (level: 'info' | 'warn' | 'error'): Logger =>
  (message, fields = {}) => {
    if (process.env.LOG_LEVEL === 'silent') return;
    const line = JSON.stringify({ level, message, ...fields });
    if (level === 'error') console.error(line);
    else console.log(line);
  };

export const log = { info: jsonLogger('info'), warn: jsonLogger('warn'), error: jsonLogger('error') };
