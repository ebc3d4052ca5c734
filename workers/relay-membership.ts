import type { NativeConnection } from '@temporalio/worker';
import type { Producer } from 'kafkajs';
import type { Pool } from 'pg';
import type { RelayWorkerSet } from './relay-worker-set';

// How long a relay worker stepping aside waits for its Temporal workers to drain before it may
// rejoin. The drain waits on long polls held by a dead Temporal link (until the SDK's keepalive,
// up to 45 s) and on sessions' statements; it goes on in the background, inert (it polls nothing
// new and has left the relay workers), and its connection closes when it is done.
const STEP_ASIDE_DRAIN_MS = 10_000;

/** A Temporal connection, a database pool and a Kafka producer for one membership, and how to let go of them once it has drained. */
export interface MembershipLinks {
  connection: NativeConnection;
  pool: Pool;
  producer: Producer;
  /**
   * Stepping aside: lets go of what waits on the broken link at once, without waiting (the
   * producer's sends in flight fail, so the sessions blocked in them end and their shards move).
   */
  abandon(): void;
  release(): Promise<void>;
}

/**
 * One membership of a relay worker (workers/step-aside.ts starts one, and a new one after each
 * heal): a relay worker set on a Temporal connection, a database pool and a Kafka producer of its
 * own, released when the set has drained. A membership that stepped aside stops holding up the
 * next one after STEP_ASIDE_DRAIN_MS, and the next one gets new links: the last ones may hold
 * connections a heal left dead (an idle pooled connection frozen by a NAT is found only by its
 * query timeout, 35 s; a producer whose broker connections a one-way link froze keeps sending
 * into them).
 */
export async function startRelayMembership(
  connect: () => Promise<MembershipLinks>,
  create: (links: MembershipLinks) => Promise<RelayWorkerSet>,
): Promise<RelayWorkerSet> {
  const links = await connect();
  const { release } = links;
  let set: RelayWorkerSet;
  try {
    set = await create(links);
  } catch (err) {
    await release();
    throw err;
  }
  let givenUp: () => void = () => undefined;
  const drainBound = new Promise<void>((resolve) => (givenUp = resolve));
  return {
    ...set,
    shutdown(stepAside = false) {
      if (stepAside) {
        links.abandon();
        setTimeout(givenUp, STEP_ASIDE_DRAIN_MS).unref();
      }
      return set.shutdown(stepAside);
    },
    async run() {
      const running = set.run().finally(release);
      running.catch(() => undefined);
      await Promise.race([running, drainBound]);
    },
  };
}
