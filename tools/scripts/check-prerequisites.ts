import { describeMissing, missingPrerequisites, thisMachine } from '../local-stack/prerequisites';
import { pythonWithPip } from '../local-stack/temporal-cli';

// `npm test` runs this first: on a machine without what the suite needs it stops here, before
// typecheck, with one sentence per missing package and the command that installs it, instead of
// failing half-way through the suite.

const missing = missingPrerequisites(thisMachine(() => pythonWithPip() !== undefined));
if (missing.length > 0) {
  for (const sentence of describeMissing(missing)) process.stderr.write(`${sentence}\n`);
  process.exit(1);
}
