import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import {
  DUE_INDEX,
  INDEX_PROJECTION,
  INDEXES,
  TABLE_KEYS,
  TTL_ATTRIBUTE,
} from '../../functions/adapters/dynamodb/table.js';
import { keepLogicalId, LEGACY_IDS } from '../legacy-ids.js';

/**
 * The service's single table (layout in functions/adapters/dynamodb/table.ts): on-demand, point-in-
 * time recovery on, kept when the stack is deleted (every email's history is in it), rate counters
 * and idempotency keys expiring by TTL, the two listing indexes projecting only what a list
 * page needs, and the keys-only index of scheduled emails by due time.
 */
export class EmailTable extends Construct {
  public readonly table: Table;

  constructor(scope: Construct, id: string) {
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
    for (const index of Object.values(INDEXES)) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
        ...(index.name === DUE_INDEX.name
          ? { projectionType: ProjectionType.KEYS_ONLY }
          : { projectionType: ProjectionType.INCLUDE, nonKeyAttributes: [...INDEX_PROJECTION] }),
      });
    }
  }
}
