import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

/**
 * A confirmation asked in the page (not window.confirm): a modal `<dialog>`, so focus stays inside
 * it, Escape cancels, and the cancel button has focus first (a stray Enter destroys nothing).
 */
export function Confirm({
  title,
  action,
  busy,
  onConfirm,
  onCancel,
  children,
}: {
  title: string;
  /** The destructive button's name: "Delete", "Revoke". */
  action: string;
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
  children?: ComponentChildren;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const cancel = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    cancel.current?.focus();
    return () => dialog?.close();
  }, []);
  return (
    <dialog
      ref={ref}
      class="confirm"
      aria-labelledby="confirm-title"
      onCancel={(event) => {
        event.preventDefault();
        onCancel();
      }}
    >
      <h2 id="confirm-title">{title}</h2>
      {children}
      <div class="actions">
        <button type="button" class="danger" disabled={busy} onClick={onConfirm}>
          {action}
        </button>
        <button type="button" class="secondary" ref={cancel} onClick={onCancel}>
          Cancel
        </button>
      </div>
    </dialog>
  );
}
