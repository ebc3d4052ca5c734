import type { Producer } from 'kafkajs';
import type { Pool } from 'pg';
import type { Config } from '../../config/env';
import type { PendingListener } from './pending-listener';

export interface RelayActivityDeps {
  pool: Pool;
  producer: Producer;
  config: Config;
  listener: PendingListener;
}
