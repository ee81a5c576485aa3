import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AGENT_DISPLAY_NAMES, AGENT_KINDS, DEFAULT_BINARIES, isAgentKind } from '../../src/agents/agentKinds.js';
import { EVIDENCE_TOOLS } from '../../src/critic/criticEvidence.js';
import { LOGIN_CHECKS } from '../../src/loop/agentDoctor.js';
import { repoRoot } from '../support/testEnvironment.js';

/**
 * Adding an agent (CONTRIBUTING's "Where to copy from"): the tables of the code keyed by
 * `AgentKind` refuse to compile without it (the adapters, display names, binaries, the
 * doctor's login checks, the critic's evidence tools, the recorded runs). These are the
 * places the compiler cannot see.
 */
describe('adding an agent: every place that lists the agents lists them all', () => {
  const manifest = JSON.parse(fs.readFileSync(path.join(repoRoot(), 'package.json'), 'utf8')) as { contributes: unknown };
  const settings = (manifest.contributes as { configuration: { properties: Record<string, unknown> } }).configuration.properties;

  /** Every `enum` in the manifest's contributions that holds an agent's name, by where it is. */
  function agentEnums(node: unknown, at: string, found: Map<string, { enum: unknown[]; enumItemLabels?: string[] }>) {
    if (Array.isArray(node)) node.forEach((each, index) => agentEnums(each, `${at}[${index}]`, found));
    else if (node !== null && typeof node === 'object') {
      const object = node as Record<string, unknown>;
      if (Array.isArray(object.enum) && object.enum.some((value) => typeof value === 'string' && isAgentKind(value)))
        found.set(at, object as { enum: unknown[]; enumItemLabels?: string[] });
      for (const [key, value] of Object.entries(object)) agentEnums(value, `${at}.${key}`, found);
    }
    return found;
  }

  it("package.json: every enum of agents' names in contributes is the agents list, with their names as labels; agentPaths has each agent's binary", () => {
    const enums = agentEnums(manifest.contributes, 'contributes', new Map());
    // The three agent settings at least: a walk that found none would prove nothing.
    for (const setting of ['codeloops.agent', 'codeloops.actor.agent', 'codeloops.critic.agent'])
      assert.ok(enums.has(`contributes.configuration.properties.${setting}`), setting);
    for (const [at, { enum: values, enumItemLabels }] of enums) {
      // A setting's enum opens with "" (from the config files).
      const agents = values[0] === '' ? values.slice(1) : values;
      assert.deepEqual(agents, [...AGENT_KINDS], at);
      if (enumItemLabels) {
        const labels = values[0] === '' ? enumItemLabels.slice(1) : enumItemLabels;
        assert.equal(labels.length, AGENT_KINDS.length, `${at}.enumItemLabels`);
        AGENT_KINDS.forEach((kind, index) => assert.ok(labels[index]!.startsWith(AGENT_DISPLAY_NAMES[kind]), `${at}.enumItemLabels: ${labels[index]}`));
      }
    }
    const paths = (settings['codeloops.agentPaths'] as { properties: Record<string, { description: string }> }).properties;
    assert.deepEqual(Object.keys(paths), Object.keys(DEFAULT_BINARIES));
    for (const [kind, binary] of Object.entries(DEFAULT_BINARIES)) assert.ok(paths[kind]!.description.includes(`(${binary})`), `agentPaths.${kind}`);
  });

  it("doctor: each agent's login check sees no login in an empty home, in the agent's name; the README names the agents it checks", () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'codeloops-no-login-'));
    try {
      // A kind the table misses (the build does not type-check) is named, not a TypeError.
      for (const kind of AGENT_KINDS)
        assert.notEqual(LOGIN_CHECKS[kind], undefined, `LOGIN_CHECKS (loop/agentDoctor.ts) has no ${kind}: a check, or null saying why`);
      const checked = AGENT_KINDS.filter((kind) => LOGIN_CHECKS[kind] !== null);
      for (const kind of checked) {
        const problem = LOGIN_CHECKS[kind]!({ HOME: home }, home, path.join(home, 'config.toml'));
        if (process.platform === 'darwin' && kind === 'claude') continue; // its login is in the keychain
        assert.ok(problem, kind);
        assert.ok(problem.message.startsWith(`${AGENT_DISPLAY_NAMES[kind]} has no login`), problem.message);
      }
      const readme = fs.readFileSync(path.join(repoRoot(), 'README.md'), 'utf8');
      const named = /not logged in \(where that can be seen cheaply: [^)]*, for ([^)]+)\)/.exec(readme)?.[1];
      assert.deepEqual(
        named?.split(/, | and /),
        checked.map((kind) => AGENT_DISPLAY_NAMES[kind]),
        "the README's doctor section",
      );
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
  });

  it("the critic's evidence: every agent that calls tools names its shell (each agent's recorded shell call is folded in adapters.test.ts)", () => {
    for (const kind of AGENT_KINDS) {
      assert.ok(EVIDENCE_TOOLS[kind], `EVIDENCE_TOOLS (critic/criticEvidence.ts) has no ${kind}`);
      if (kind === 'command') assert.deepEqual(EVIDENCE_TOOLS[kind], { commands: [], reads: [] }, 'plain output, no tool calls');
      else assert.ok(EVIDENCE_TOOLS[kind].commands.length > 0, `${kind}: without its shell, every DONE its critic gives is unverified`);
    }
  });

  it("the README: a row for each agent in its Agents table, and for each but `command` in the proven versions'", () => {
    const readme = fs.readFileSync(path.join(repoRoot(), 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('\n### Agents\n'), readme.indexOf('\n### Checking your agents'));
    assert.deepEqual([...section.matchAll(/^\| `(\w+)` \|/gm)].map((row) => row[1]).sort(), [...AGENT_KINDS].sort());
    const proven = [...section.matchAll(/^\| ([^|`]+?) \| .*\| [^|]+ \|$/gm)].map((row) => row[1]).filter((name) => name !== 'agent');
    assert.deepEqual(
      proven.sort(),
      Object.keys(DEFAULT_BINARIES)
        .map((kind) => AGENT_DISPLAY_NAMES[kind as keyof typeof DEFAULT_BINARIES])
        .sort(),
    );
  });
});
