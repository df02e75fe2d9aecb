import type { AuthenticationResult, ReceivedEmailListItem, ScanVerdict } from './answers.js';

/** How a verdict reads: good, bad, neither (gray, a check that failed), or none given. */
type Tone = 'ok' | 'bad' | 'warn' | 'none';

/** SPF, DKIM and DMARC as Resend's `authentication` gives them (SES's verdicts). */
const AUTHENTICATION: Record<AuthenticationResult, { tone: Tone; words: string }> = {
  pass: { tone: 'ok', words: 'pass' },
  fail: { tone: 'bad', words: 'fail' },
  gray: { tone: 'warn', words: 'gray' },
  processing_failed: { tone: 'warn', words: 'not checked (SES failed)' },
  unknown: { tone: 'none', words: 'unknown' },
};

/** SES's spam and virus scans: `pass` is "none found", `fail` is "found". */
const SCAN: Record<ScanVerdict, { tone: Tone; words: string }> = {
  pass: { tone: 'ok', words: 'none found' },
  fail: { tone: 'bad', words: 'found' },
  gray: { tone: 'warn', words: 'undetermined' },
  processing_failed: { tone: 'warn', words: 'not scanned (SES failed)' },
  disabled: { tone: 'none', words: 'not scanned' },
  unknown: { tone: 'none', words: 'unknown' },
};

/** One verdict as a badge that never breaks inside ("SPF pass", "Virus found"). */
function Verdict({ name, tone, words, value }: { name: string; tone: Tone; words: string; value: string }) {
  return (
    <span class={`badge verdict verdict-${tone}`} title={`${name}: ${value}`}>
      {name} {words}
    </span>
  );
}

/** A received email's verdicts as badges, in a list a screen reader counts: SPF, DKIM, DMARC, spam, virus. */
export function Verdicts({
  email,
}: {
  email: Pick<ReceivedEmailListItem, 'authentication' | 'spam' | 'virus'>;
}) {
  const auth = email.authentication;
  const scan = (name: string, value: ScanVerdict | undefined) =>
    value === undefined ? null : <Verdict name={name} value={value} {...(SCAN[value] ?? SCAN.unknown)} />;
  const items = [
    ...(auth
      ? (
          [
            ['SPF', auth.spf],
            ['DKIM', auth.dkim],
            ['DMARC', auth.dmarc],
          ] as const
        ).map(([name, value]) => (
          <Verdict
            key={name}
            name={name}
            value={value}
            {...(AUTHENTICATION[value] ?? AUTHENTICATION.unknown)}
          />
        ))
      : []),
    scan('Spam', email.spam),
    scan('Virus', email.virus),
  ].filter((item) => item !== null);
  if (!items.length) return <span class="muted">—</span>;
  return (
    <ul class="verdicts" aria-label="Verdicts">
      {items.map((item, i) => (
        <li key={i}>{item}</li>
      ))}
    </ul>
  );
}

/** Whether SES flagged the message as carrying a virus. */
export const virusFound = (email: Pick<ReceivedEmailListItem, 'virus'>) => email.virus === 'fail';
