import type { Producer } from 'kafkajs';
import type { Config } from '../../src/config/env';
import type { RegistryEncoder } from '../../src/formats/registry/encoder';
import type { SqlExecutor } from '../../src/db/executor';
import type { EventCatalog } from '../../src/events/catalog';
import type { BytesInFlight } from './bytes-in-flight';
import type { PendingListener } from './pending-listener';
import type { SharedRoundTrips } from './shared-round-trips';

export interface RelayActivityDeps {
  /** A pool in a worker; a relay session passes its own connection (the one holding the shard's lock). */
  pool: SqlExecutor;
  producer: Producer;
  config: Config;
  listener: PendingListener;
  /** Row bodies the whole process holds at once (createRelayActivities makes one per process). */
  bytesInFlight?: BytesInFlight;
  /** The per-batch statements and Kafka requests, shared by the process's shards (createRelayActivities makes one per process). */
  roundTrips?: SharedRoundTrips;
  /** issue 34 (events): the service's event types; a row its schema refuses is parked (publish-batch.ts). */
  events?: EventCatalog;
  /** Schema Registry encoding (src/formats/registry); unset: built from config.kafka.schemaRegistry, without schemas declared in code. */
  schemaRegistry?: RegistryEncoder;
}

/** What the publish and mark steps get: the process's one set of shared round trips, never one of their own. */
export type RelayStepDeps = RelayActivityDeps & { roundTrips: SharedRoundTrips };
