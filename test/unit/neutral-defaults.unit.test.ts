import assert from 'node:assert/strict';
import { auditInput } from '../../src/audit/schedule';
import { ConfigError, loadConfig, resolveConfig } from '../../src/config/env';
import { withExampleNames, withExampleSettings } from '../../examples/example-settings';

// The library's defaults name nothing of the payments example; the example sets its own names.
describe("the library's defaults are neutral; the example names its own", () => {
  it('defaults the topics, group and inbox to neutral names and audits no consumer it was not told of', () => {
    for (const config of [resolveConfig(), loadConfig({})]) {
      assert.deepEqual([config.kafka.topic, config.kafka.deadLetterTopic, config.kafka.consumerGroup, config.consumer.inboxName], ['outbox.events', 'outbox.events.dlq', 'outbox-consumer', 'outbox-consumer']);
      assert.deepEqual(config.audit.consumers, []);
      assert.doesNotMatch(JSON.stringify({ ...config, cacheDir: undefined }), /payment|account/i, 'no setting names the example (the cache folder is wherever the checkout is)');
    }
    assert.deepEqual(loadConfig({ INBOX_CONSUMER: 'billing' }).audit.consumers, [], 'an inbox name alone does not say which event types it applies');
  });

  it('refuses to build the audit schedule without audited consumers, naming AUDIT_CONSUMERS', () => {
    assert.throws(() => auditInput(loadConfig({})), (err: unknown) => err instanceof ConfigError && /AUDIT_CONSUMERS/.test(err.message));
    assert.deepEqual(auditInput(loadConfig({ AUDIT_CONSUMERS: 'billing=invoice_paid|invoice_voided' })).consumers, [{ consumer: 'billing', eventTypes: ['invoice_paid', 'invoice_voided'] }]);
  });

  it("gives the example its own names, and audits its inbox for the event types its consumer's handlers apply", () => {
    const config = loadConfig(withExampleSettings({}));
    assert.deepEqual([config.kafka.topic, config.kafka.deadLetterTopic, config.kafka.consumerGroup, config.consumer.inboxName], ['payments.events', 'payments.events.dlq', 'payments-credit', 'payments-credit']);
    assert.deepEqual(config.audit.consumers, [{ consumer: 'payments-credit', eventTypes: ['payment_confirmed'] }]);
    const both = loadConfig(withExampleSettings({ INBOX_CONSUMER: 'credit-2', CONSUMER_HANDLERS: 'payment_confirmed,order_shipped' }));
    assert.deepEqual(both.audit.consumers, [{ consumer: 'credit-2', eventTypes: ['payment_confirmed', 'order_shipped'] }]);
    assert.equal(loadConfig(withExampleSettings({ KAFKA_TOPIC: 'mine' })).kafka.topic, 'mine', 'what the environment names wins');
    assert.equal(withExampleNames({}).AUDIT_CONSUMERS, undefined, 'a process that starts consumers of other names leaves the audit to each');
  });
});
