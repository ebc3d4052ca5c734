import { ScheduleAlreadyRunning, type Client, type ScheduleOptions } from '@temporalio/client';

/**
 * Creates a schedule, or brings an existing one to these spec, action and policies. Safe to run
 * any number of times (every start of the stack or demo does); a paused schedule stays paused,
 * because its state is left as the operator set it.
 */
export async function upsertSchedule(client: Client, options: ScheduleOptions): Promise<'created' | 'updated'> {
  try {
    await client.schedule.create(options);
    return 'created';
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  await client.schedule.getHandle(options.scheduleId).update((previous) => ({
    ...previous,
    spec: options.spec,
    action: options.action,
    policies: { ...previous.policies, ...options.policies },
  }));
  return 'updated';
}
