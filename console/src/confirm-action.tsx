import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import './confirm-action.css';

/**
 * A destructive action asked twice, in the page (not window.confirm): the first button shows what
 * will happen and a second button of the action's own name, with "Cancel" beside it. Keyboard
 * users land on the question; Escape or Cancel goes back.
 */
export function ConfirmAction({
  label,
  confirmLabel,
  question,
  busy,
  onConfirm,
  danger = true,
  small = false,
}: {
  /** The first button ("Remove", "Delete webhook"…). */
  label: string;
  /** The button that does it ("Remove", "Delete"…). */
  confirmLabel: string;
  /** What will happen, in words. */
  question: ComponentChildren;
  busy?: boolean;
  onConfirm: () => unknown;
  danger?: boolean;
  small?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  const questionRef = useRef<HTMLFieldSetElement>(null);
  useEffect(() => {
    if (asking) questionRef.current?.focus();
  }, [asking]);
  const buttonClass = `${danger ? 'danger' : ''}${small ? ' small' : ''}`.trim() || undefined;
  if (!asking)
    return (
      <button type="button" class={buttonClass} disabled={busy} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  return (
    <fieldset
      class="confirm"
      aria-label={`Confirm: ${label}`}
      tabIndex={-1}
      ref={questionRef}
      onKeyDown={(e) => e.key === 'Escape' && setAsking(false)}
    >
      <p>{question}</p>
      <div class="actions">
        <button
          type="button"
          class={buttonClass}
          disabled={busy}
          onClick={async () => {
            await onConfirm();
            setAsking(false);
          }}
        >
          {confirmLabel}
        </button>
        <button type="button" class={`secondary${small ? ' small' : ''}`} onClick={() => setAsking(false)}>
          Cancel
        </button>
      </div>
    </fieldset>
  );
}
