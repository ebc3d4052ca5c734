import { setTimeout as sleep } from 'node:timers/promises';
import { wireMessage } from './consumer-harness';
import { testKafka } from './kafka';

/**
 * A steady stream of credits straight onto a topic, as the relay writes them: 100 messages every
 * 100 ms, one in ten a redelivery of an earlier event, until `stop()`. `expected` holds each
 * account's sum over distinct events (what exactly-once application must leave), `unique` how
 * many distinct events were sent.
 */
export class CreditStream {
  readonly expected = new Map<number, number>();
  unique = 0;
  private running = true;
  private readonly done: Promise<void>;

  constructor(topic: string, idPrefix: string, accounts: number) {
    this.done = this.run(topic, idPrefix, accounts);
  }

  /** Stops sending and waits for the last batch and the producer's disconnect. */
  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }

  private async run(topic: string, idPrefix: string, accounts: number): Promise<void> {
    const producer = testKafka().producer();
    await producer.connect();
    const sent: { event_id: string; account_id: number; amount: number }[] = [];
    try {
      while (this.running) {
        const messages = [];
        for (let i = 0; i < 100; i++) {
          const isRepeat = sent.length > 0 && i % 10 === 9;
          const e = isRepeat ? sent[(sent.length * 7) % sent.length]! : { event_id: `${idPrefix}-${this.unique}`, account_id: 1 + (this.unique % accounts), amount: 1 + (this.unique % 997) };
          if (!isRepeat) {
            this.unique++;
            sent.push(e);
            this.expected.set(e.account_id, (this.expected.get(e.account_id) ?? 0) + e.amount);
          }
          messages.push(wireMessage(e, this.unique));
        }
        await producer.send({ topic, messages });
        await sleep(100);
      }
    } finally {
      await producer.disconnect();
    }
  }
}
