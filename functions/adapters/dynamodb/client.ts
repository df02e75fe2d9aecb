import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** One client per container, reused by every invocation. Endpoint from AWS_ENDPOINT_URL_DYNAMODB when set (local). */
export const createDocumentClient = (client = new DynamoDBClient({})) =>
  DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });

/** A conditional write whose condition did not hold (the expected outcome of a guarded write, not a fault). */
export const isConditionFailure = (error: unknown) =>
  error instanceof Error && error.name === 'ConditionalCheckFailedException';
