import type { Kafka } from 'kafkajs';

// kafkajs alone, no relay: how long one producer.send of a relay-sized batch takes, by acks and
// message size. Separates the broker/client cost from Temporal's and PostgreSQL's.

export interface SendProbeResult {
  acks: number;
  valueBytes: number;
  messagesPerSend: number;
  sends: number;
  msPerSendMedian: number;
  messagesPerSecond: number;
}

export async function probeKafkaSend(kafka: Kafka, topic: string, opts: { acks: -1 | 1; valueBytes: number; messagesPerSend: number; seconds: number }): Promise<SendProbeResult> {
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  try {
    const filler = 'x'.repeat(Math.max(0, opts.valueBytes - 90));
    const message = (i: number) => ({
      key: String(i % 1000),
      value: `{"event_id":"probe-${i}","type":"payment_confirmed","account_id":${i % 1000},"amount":100,"f":"${filler}"}`,
      headers: { 'event-id': `probe-${i}`, 'event-type': 'payment_confirmed', 'created-at': new Date().toISOString(), 'outbox-id': String(i) },
    });
    const times: number[] = [];
    let sent = 0;
    const started = Date.now();
    while (Date.now() - started < opts.seconds * 1000) {
      const messages = Array.from({ length: opts.messagesPerSend }, (_, k) => message(sent + k));
      const t = performance.now();
      await producer.send({ topic, acks: opts.acks, messages });
      times.push(performance.now() - t);
      sent += messages.length;
    }
    const elapsed = (Date.now() - started) / 1000;
    times.sort((a, b) => a - b);
    return {
      acks: opts.acks,
      valueBytes: opts.valueBytes,
      messagesPerSend: opts.messagesPerSend,
      sends: times.length,
      msPerSendMedian: +times[Math.floor(times.length / 2)]!.toFixed(1),
      messagesPerSecond: Math.round(sent / elapsed),
    };
  } finally {
    await producer.disconnect();
  }
}
