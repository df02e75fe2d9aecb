import type { APIGatewayRequestAuthorizerEventV2 } from 'aws-lambda';
import { extensionSecret } from '../adapters/secrets-manager/extension.js';
import { makeFrontDoorAuthorizer } from '../http/front-door.js';

/**
 * The front door's authorizer (an HTTP API Lambda authorizer on every route, made only with the
 * front door on): passes the requests that carry CloudFront's secret header. The secret is read
 * from Secrets Manager (through the secrets extension) on first use, never from the environment,
 * which holds only its ARN. Kept to a few KB: no SDK, no zod (its one setting is checked here).
 */
export const makeHandler = makeFrontDoorAuthorizer;

let authorize: ReturnType<typeof makeHandler> | undefined;
export const handler = (event: APIGatewayRequestAuthorizerEventV2) => {
  if (!authorize) {
    const secretId = process.env.FRONT_DOOR_SECRET_ARN;
    if (!secretId) throw new Error('FRONT_DOOR_SECRET_ARN is not set: the stack sets it with the front door');
    authorize = makeHandler({ readSecret: extensionSecret({ secretId }) });
  }
  return authorize(event);
};
