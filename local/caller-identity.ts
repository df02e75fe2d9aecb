import { useClientPlugin } from '../functions/adapters/aws-clients.js';
import { currentFunction } from './invocation.js';

/**
 * Callers whose role is another function's: the SMTP relay's task role is granted exactly
 * send-email's access (functions/smtp-relay/access.ts), so the stand-ins answer it as that role.
 */
const SAME_ROLE_AS: Record<string, string> = { 'smtp-relay': 'send-email' };

/** The header that tells the local stand-ins for AWS which function (which role) makes a call. */
export const CALLER_HEADER = 'x-local-function';

/**
 * On AWS a request is made with its function's role, and what AWS answers can depend on the
 * role's grants (S3 answers a missing object 403 to a role without s3:ListBucket, 404 to one with
 * it; SES refuses an action the role lacks). Locally every function shares one set of
 * credentials, so this names the calling function in a header of every S3 and SES request made
 * inside an invocation, and the stand-ins answer as AWS would answer that function's role (from
 * its catalog entry). Returns a function that removes it.
 */
export function identifyCallers(): () => void {
  return useClientPlugin({
    applyToStack(stack) {
      stack.add(
        (next: (args: unknown) => Promise<unknown>, context: { clientName?: string }) =>
          async (args: unknown) => {
            const caller = currentFunction();
            const request = (args as { request?: { headers?: Record<string, string> } }).request;
            if (caller && request?.headers && /^(S3|SESv2|SES)Client$/.test(context.clientName ?? ''))
              request.headers[CALLER_HEADER] = SAME_ROLE_AS[caller] ?? caller;
            return next(args);
          },
        { step: 'build', name: 'localCallerIdentity' },
      );
    },
  });
}
