import { useState } from 'preact/hooks';
import { ErrorNote } from './components.js';

/**
 * A page's requests that change something (create, save, delete): one at a time (`busy` disables
 * the buttons), the refusal kept to show, and what was done to say in a status line.
 */
export function useAction(onDone?: () => void) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [done, setDone] = useState('');
  /** Runs the request; true when it succeeded (then `said` is shown and `onDone` called). */
  const run = async (request: () => Promise<unknown>, said = ''): Promise<boolean> => {
    setBusy(true);
    setError(undefined);
    setDone('');
    try {
      await request();
      setDone(said);
      onDone?.();
      return true;
    } catch (failure) {
      setError(failure);
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, done, run };
}

/** What an action did (a status line screen readers read out), or why it was refused. */
export function ActionNotes({ action }: { action: { done: string; error: unknown } }) {
  return (
    <>
      {action.done && (
        <p class="notice" role="status">
          {action.done}
        </p>
      )}
      <ErrorNote error={action.error} />
    </>
  );
}
