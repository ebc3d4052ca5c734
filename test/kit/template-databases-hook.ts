import { dropTemplateDatabases, useTemplateDatabases } from './database-templates';

// Mocha root hook module (.mocharc.cjs): the run's test databases are copies of a migrated
// template (test/kit/database-templates.ts), and the templates go when the run ends.
useTemplateDatabases();

export const mochaHooks = {
  async afterAll() {
    await dropTemplateDatabases();
  },
};
