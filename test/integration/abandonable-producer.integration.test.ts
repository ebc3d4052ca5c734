import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { Admin, Producer } from 'kafkajs';
import { abandonableProducer } from '../../src/kafka/abandonable-producer';
import { createTestTopic, testKafka } from '../kit/kafka';

// The relay worker's producer, given up at a step-aside (src/kafka/abandonable-producer.ts), on a
// real broker. A worker's membership keeps one for as long as it is healthy — days — so what a
// send leaves behind in it adds up: each activity's context (held by its send's promise) must be
// free once the send is over, as the activity's own objects are.
function collectGarbage() {
  v8.setFlagsFromString('--expose-gc');
  (vm.runInNewContext('gc') as () => void)();
}

describe('the relay\'s abandonable Kafka producer', function () {
  this.timeout(60_000);
  let producer: Producer;
  let admin: Admin;
  let topic: { topic: string; remove(): Promise<void> };
  const highWatermark = async (name: string) => Number((await admin.fetchTopicOffsets(name))[0]!.high);

  before(async () => {
    topic = await createTestTopic(1);
    producer = testKafka().producer();
    admin = testKafka().admin();
    await Promise.all([producer.connect(), admin.connect()]);
  });
  after(async () => {
    await Promise.all([producer.disconnect(), admin.disconnect()]);
    await topic.remove();
  });

  it('keeps nothing of a send once it is over (the sending activity\'s context is collected)', async () => {
    const { producer: wrapped } = abandonableProducer(producer);
    // What an activity's context is to a send: the async context the send ran in.
    const activityContext = new AsyncLocalStorage<{ input: number[] }>();
    // Each send from a function of its own: a suspended async function keeps its registers, so
    // the test's own frame would otherwise hold the last context it made.
    const sendInContext = async (i: number): Promise<WeakRef<object>> => {
      const context = { input: new Array<number>(10_000).fill(i) };
      const acked = await activityContext.run(context, () => wrapped.send({ topic: topic.topic, messages: [{ key: `k${i}`, value: `v${i}` }] }));
      assert.equal(acked[0]?.errorCode, 0, 'the broker acked the send');
      return new WeakRef(context);
    };
    const contexts: WeakRef<object>[] = [];
    for (let i = 0; i < 20; i++) contexts.push(await sendInContext(i));
    for (let round = 0; round < 5 && contexts.some((c) => c.deref() !== undefined); round++) {
      await new Promise((resolve) => setImmediate(resolve));
      collectGarbage();
    }
    const kept = contexts.filter((c) => c.deref() !== undefined).length;
    assert.equal(kept, 0, `${kept} of 20 finished sends' contexts are still held by the producer`);
  });

  it('rejects a send in flight at once when abandoned, and every later send, with the reason', async () => {
    const { producer: wrapped, abandon } = abandonableProducer(producer);
    await wrapped.send({ topic: topic.topic, messages: [{ value: 'before' }] });
    const inFlight = wrapped.send({ topic: topic.topic, messages: [{ value: 'in flight' }] });
    abandon();
    await assert.rejects(inFlight, /abandoned: the worker is stepping aside/);
    await assert.rejects(wrapped.sendBatch({ topicMessages: [{ topic: topic.topic, messages: [{ value: 'after' }] }] }), /abandoned/);
  });

  it('once abandoned, hands no send to kafkajs: nothing more reaches the topic', async () => {
    // A topic of its own: the test before leaves a send in flight on the shared one.
    const own = await createTestTopic(1);
    try {
      const { producer: wrapped, abandon } = abandonableProducer(producer);
      await wrapped.send({ topic: own.topic, messages: [{ value: 'while healthy' }] });
      assert.equal(await highWatermark(own.topic), 1, 'a send before the step-aside reaches the topic');
      abandon();
      await assert.rejects(wrapped.send({ topic: own.topic, messages: [{ value: 'after' }] }), /abandoned/);
      await assert.rejects(wrapped.sendBatch({ topicMessages: [{ topic: own.topic, messages: [{ value: 'after' }] }] }), /abandoned/);
      // Long enough for a request kafkajs had been given to reach a local broker many times over.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      assert.equal(await highWatermark(own.topic), 1, 'a send after the step-aside reached the topic');
    } finally {
      await own.remove();
    }
  });
});
