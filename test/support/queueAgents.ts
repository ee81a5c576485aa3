import path from 'node:path';
import { scriptedCliSetup } from './scriptedAgent.js';
import { git, tempDir, writeFile } from './testEnvironment.js';

/**
 * The actor reads its task from its prompt (saved by the scripted agent): TASK-<name>
 * writes <name>.txt; a task that says #fail changes nothing; a task that says
 * #ask asks which colour until the answer ("colour: …") is in its prompt, then writes it;
 * a task that says #hold holds (once) until the test kills the runner. \`#write <path>\`
 * writes <path> instead (<name> in it; a folder there, or a file where its folder goes,
 * makes way), \`#delete <path>\` deletes it. Then it may do what an agent should not to
 * its branch: \`#detach-delete\` commits, detaches HEAD and deletes the branch;
 * \`#orphan-branch\` moves the branch to a root commit of its own; \`#link-branch\`
 * detaches HEAD and makes the branch a symbolic ref to the user's main.
 */
const ACTOR = `import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
const agentDir = process.env.SCRIPTED_AGENT_DIR;
const prompt = fs.readFileSync(path.join(agentDir, 'actor-' + process.env.SCRIPTED_AGENT_CALL + '.prompt'), 'utf8');
const name = /TASK-([a-z]+)/.exec(prompt)[1];
const git = (...args) => execFileSync('git', ['-c', 'user.name=Agent', '-c', 'user.email=agent@example.com', ...args], { encoding: 'utf8' }).trim();
const written = /#write (\\S+)/.exec(prompt);
const deleted = /#delete (\\S+)/.exec(prompt);
if (written) {
  // What is in the way makes way: a folder where the file goes, a file where its folder goes.
  if (fs.statSync(path.dirname(written[1]), { throwIfNoEntry: false })?.isFile()) fs.rmSync(path.dirname(written[1]));
  fs.rmSync(written[1], { recursive: true, force: true });
  fs.mkdirSync(path.dirname(written[1]), { recursive: true });
  fs.writeFileSync(written[1], name + '\\n');
} else if (deleted) {
  fs.rmSync(deleted[1]);
} else if (prompt.includes('#hold') && !fs.existsSync(path.join(agentDir, 'held'))) {
  fs.writeFileSync(name + '.txt', 'half done\\n');
  // The scripted agent that started this program leads the agent's process group.
  fs.writeFileSync(path.join(agentDir, 'held'), String(process.ppid));
  setInterval(() => {}, 1000);
} else if (prompt.includes('#wait') && !fs.existsSync(path.join(agentDir, 'release'))) {
  // Works until the test releases it: the queue is running meanwhile.
  fs.writeFileSync(path.join(agentDir, 'waiting'), '');
  while (!fs.existsSync(path.join(agentDir, 'release'))) await new Promise((resolve) => setTimeout(resolve, 20));
  fs.writeFileSync(name + '.txt', name + '\\n');
} else if (prompt.includes('#fail')) {
  process.stdout.write('I cannot do it.\\n');
} else if (prompt.includes('#ask')) {
  const answer = /colour: ([a-z]+)/.exec(prompt);
  if (answer) fs.writeFileSync(name + '.txt', answer[1] + '\\n');
  else process.stdout.write('<needs_input>Which colour?</needs_input>\\n');
} else {
  fs.writeFileSync(name + '.txt', name + '\\n');
}
if (prompt.includes('#detach-delete')) {
  const branch = git('symbolic-ref', '--short', 'HEAD');
  git('add', '-A');
  git('commit', '-q', '-m', 'agent: my own commit');
  git('checkout', '-q', '--detach');
  git('branch', '-q', '-D', branch);
} else if (prompt.includes('#link-branch')) {
  const branch = git('symbolic-ref', 'HEAD');
  git('checkout', '-q', '--detach');
  git('symbolic-ref', branch, 'refs/heads/main');
} else if (prompt.includes('#orphan-branch')) {
  const root = git('commit-tree', git('hash-object', '-t', 'tree', '-w', '/dev/null'), '-m', 'agent: a root of my own');
  git('update-ref', git('symbolic-ref', 'HEAD'), root);
}
`;

/** The critic says DONE naming the task when its file is there, and CONTINUE with a finding when not. */
const CRITIC = `import fs from 'node:fs';
import path from 'node:path';
const agentDir = process.env.SCRIPTED_AGENT_DIR;
const prompt = fs.readFileSync(path.join(agentDir, 'critic-' + process.env.SCRIPTED_AGENT_CALL + '.prompt'), 'utf8');
const name = /TASK-([a-z]+)/.exec(prompt)[1];
const decide = (decision) => process.stdout.write('Reviewed.\\n<decision>' + JSON.stringify(decision) + '</decision>\\n');
// #nul: a summary with a NUL, escape sequences and a first line of 300 characters.
const summary = prompt.includes('#nul') ? 'Wrote ' + name + '.txt\\u0000 for \\u001b[31mTASK-' + name + '\\u001b[0m ' + 'and more '.repeat(33) + '\\nSecond line.' : 'Wrote ' + name + '.txt for TASK-' + name;
const worked = fs.existsSync(name + '.txt') || /#(write|delete) /.test(prompt);
if (worked && !prompt.includes('#fail')) decide({ type: 'done', summary, confidence: 0.9 });
else decide({ type: 'continue', feedback: name + '.txt is missing', remaining_issues: [name], findings: [{ file: null, severity: 'error', message: name + '.txt is missing' }] });
`;

export function queueSetup(identity: 'user' | 'none' = 'user') {
  const tools = tempDir('codeloops-queue-agents-');
  writeFile(tools, 'actor.mjs', ACTOR);
  writeFile(tools, 'critic.mjs', CRITIC);
  const setup = scriptedCliSetup({
    actor: [[{ run: [process.execPath, path.join(tools, 'actor.mjs')] }]],
    critic: [[{ run: [process.execPath, path.join(tools, 'critic.mjs')] }]],
  });
  if (identity === 'user') {
    git(setup.repo, 'config', 'user.name', 'Repo User');
    git(setup.repo, 'config', 'user.email', 'repo.user@example.com');
  } else {
    // No git identity anywhere: a home without a .gitconfig.
    Object.assign(setup.env, { HOME: tempDir('codeloops-queue-home-') });
  }
  return setup;
}

/** A clone of `home` as a machine elsewhere has it (its own git identity), with a data folder of its own. */
export function shardMachine(home: string, env: Record<string, string>): { clone: string; env: Record<string, string>; dataHome: string } {
  const clone = path.join(tempDir('codeloops-shard-'), 'clone');
  git(path.dirname(clone), 'clone', '-q', home, clone);
  git(clone, 'config', 'user.name', 'Shard User');
  git(clone, 'config', 'user.email', 'shard.user@example.com');
  const dataHome = tempDir('codeloops-shard-data-');
  return { clone, env: { ...env, XDG_DATA_HOME: dataHome }, dataHome };
}
