import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import {
  INDEX_PROJECTION,
  INDEXES,
  LEGACY_INDEXES,
  projectionOf,
  TABLE_KEYS,
  TTL_ATTRIBUTE,
} from '../../functions/adapters/dynamodb/table.js';
import { keepLogicalId, LEGACY_IDS } from '../legacy-ids.js';

/**
 * The steps of the upgrade from a table of the versions before the keys-only time index (docs/operations.md,
 * "Upgrading"). CloudFormation creates or deletes one global secondary index per table update, so:
 * 1. `-c upgradeStep=1`: the keys-only `emails-by-time-keys` is added beside `emails-by-time`
 *    (DynamoDB fills it from the items already there); the functions still read `emails-by-time`.
 * 2. `-c upgradeStep=2`: the functions read `emails-by-time-keys`; the search index `emails-by-search`
 *    is added (DynamoDB fills it with the entries the functions wrote since step 1).
 * 3. no step: `emails-by-time` is deleted.
 * Reads are whole at every step: both indexes hold every email from step 1 to 3.
 */
export type UpgradeStep = 1 | 2;

export interface EmailTableProps {
  /** @default none: the table as this version makes it */
  readonly upgradeStep?: UpgradeStep;
}

/**
 * The service's single table (layout in functions/adapters/dynamodb/table.ts): on-demand, point-in-
 * time recovery on, kept when the stack is deleted (every email's history is in it), emails,
 * idempotency keys and webhook messages expiring by TTL, the time index holding keys only, the
 * status index projecting only what a list page needs, and the keys-only index of scheduled
 * emails by due time.
 */
export class EmailTable extends Construct {
  public readonly table: Table;
  /** The time index the functions read at this step. */
  public readonly timeIndex: string;
  /** Whether the table has the search index at this step (not at step 1). */
  public readonly searchable: boolean;

  constructor(scope: Construct, id: string, props: EmailTableProps = {}) {
    super(scope, id);
    this.table = new Table(this, 'Table', {
      partitionKey: { name: TABLE_KEYS.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE_KEYS.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      removalPolicy: RemovalPolicy.RETAIN,
      timeToLiveAttribute: TTL_ATTRIBUTE,
    });
    keepLogicalId(this.table, LEGACY_IDS.table);
    // The search index comes in step 2: step 1 already adds the keys-only time index.
    const indexes = [
      ...(props.upgradeStep ? [LEGACY_INDEXES.emailsByTime] : []),
      ...Object.values(INDEXES).filter(
        (index) => props.upgradeStep !== 1 || index !== INDEXES.emailsBySearch,
      ),
    ];
    for (const index of indexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
        ...(projectionOf(index.name).ProjectionType === 'KEYS_ONLY'
          ? { projectionType: ProjectionType.KEYS_ONLY }
          : { projectionType: ProjectionType.INCLUDE, nonKeyAttributes: [...INDEX_PROJECTION] }),
      });
    }
    this.searchable = props.upgradeStep !== 1;
    this.timeIndex = props.upgradeStep === 1 ? LEGACY_INDEXES.emailsByTime.name : INDEXES.emailsByTime.name;
  }
}
