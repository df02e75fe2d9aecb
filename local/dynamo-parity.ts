import { createRequire } from 'node:module';
import { applyDynamoTransactions } from './dynamo-transactions.js';

const require = createRequire(import.meta.url);

type KeyConditions = Record<string, { AttributeValueList?: { S?: string }[] }>;

let applied = false;

/**
 * Where dynalite answers what DynamoDB refuses, it is taught to refuse it too, with DynamoDB's
 * message, so a request that would fail on AWS fails here first:
 * - a Query whose key condition compares with an empty string (DynamoDB: "The AttributeValue for a
 *   key attribute cannot contain an empty string value"; dynalite finds nothing and answers).
 * And where it lacks what DynamoDB has, it is given it: TransactWriteItems (dynamo-transactions.ts).
 */
export function applyDynamoParity(): void {
  if (applied) return;
  applied = true;
  applyDynamoTransactions();
  const query = require('dynalite/validations/query') as {
    custom: (data: Record<string, unknown>) => string | undefined;
  };
  const custom = query.custom;
  query.custom = (data) => {
    const refused = custom(data);
    if (refused) return refused;
    for (const [name, condition] of Object.entries((data.KeyConditions ?? {}) as KeyConditions))
      if (condition.AttributeValueList?.some((value) => value.S === ''))
        return `One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: ${name}`;
    return undefined;
  };
}
