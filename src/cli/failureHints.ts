import type { CodeloopsError } from '../sessionFormat/failures.js';

/**
 * What to type next after a failure, in the command line's own words: the engine's
 * messages say what is wrong without naming any surface's controls, and each
 * surface adds its own (the editor offers buttons instead).
 */
export function cliHint(error: CodeloopsError): string | undefined {
  const details = error.details;
  switch (error.code) {
    case 'directory_missing':
    case 'not_a_repository':
    case 'not_a_work_tree':
      return 'Pass -d <folder> to work in another folder.';
    case 'session_not_found':
      return 'Run "codeloops sessions list" to see the sessions there.';
    case 'session_finished':
      return 'Start a new run for more work (codeloops -p "<task>"), or say what is wrong with it first: codeloops comment <session> "<what to change>", or codeloops reject <session> --iteration N --hunk K.';
    case 'hunk_not_found':
      return 'Run "codeloops review <session> --iteration N" to see the hunks with their numbers.';
    case 'tree_changed':
      if (details.merge === true) return 'Commit those changes (or put them aside) first, then merge again.';
      return 'Keep your files and carry on with --force, or put the loop\'s files back first ("codeloops rollback <session>", or your own git commands).';
    case 'snapshot_missing':
      return 'Run again with --force to carry on with the files as they are.';
    case 'iteration_limit': {
      const max = typeof details.max_iterations === 'number' ? details.max_iterations : 10;
      return `Allow more with -n (for example -n ${max + 5}), or -n 0 for no limit.`;
    }
    case 'project_untrusted':
      return 'Trust it with "codeloops trust" (a change to the file needs trusting again), or run once without trusting it with --trust.';
    case 'agent_missing':
      return 'Run "codeloops doctor" to check every agent a run here would use.';
    case 'loop_running':
      // What a dead runner left running: the command that stops its whole group.
      return typeof details.process_group === 'number'
        ? `Stop it with "kill -- -${details.process_group}" (or "kill -9 -- -${details.process_group}" if it ignores that), then run again.`
        : undefined;
    case 'needs_input':
      return `Answer it and carry on: codeloops resume ${sessionOf(details)} --answer "<your answer>"`;
    case 'agent_auth':
      return `Run "codeloops doctor" to check each agent's login and key, then carry on: codeloops resume ${sessionOf(details)}`;
    case 'usage_limit':
      return `Carry on once the limit has reset: codeloops resume ${sessionOf(details)} (or let the loop wait longer: max_wait_secs under [limits] in codeloops.toml).`;
    case 'session_ended':
      return 'Run "codeloops resume" again to carry it on in a new session.';
    case 'group_not_found':
      return 'Run "codeloops candidates" to see the candidate groups.';
    case 'eval_not_found':
      return 'An eval prints its id when it starts (eval-<date>_<hash>); "latest" names the newest one.';
    case 'eval_mismatch':
      return 'Merge the bundles of one eval: every shard run from the same suite file at the same commits, with the same --shard total. Run the odd shard again to replace it.';
    case 'setup_failed':
      return "Check [worktree] setup in codeloops.toml (it runs in each candidate's worktree), or try it with --dry-run first.";
    case 'bundle_invalid':
      if (typeof details.max_unpacked_bytes === 'number') return 'If you trust where it comes from, allow more with --max-unpacked-mb.';
      return 'Export it again with "codeloops sessions export <id…> -o bundle.tar.gz"; if commits are missing, "git fetch" them first.';
    case 'not_a_file':
      return 'Move it out of the way (it is not a record Codeloops wrote); the next command starts the record afresh.';
    case 'git_locked':
      return typeof details.lock_file === 'string'
        ? `If no git command is running in this repository (an editor's, another terminal's), remove the lock file a crashed one left: rm "${details.lock_file}"`
        : undefined;
    case 'session_exists':
      return 'Those ids are taken here (by a session, a candidate group or their snapshots): "codeloops sessions delete <id>" first to replace a session, or leave them out of the bundle.';
    case 'task_not_found':
      return 'Run "codeloops queue list" to see the tasks and their ids.';
    case 'queue_empty':
      return typeof details.waiting === 'number' && details.waiting > 0
        ? 'A task waiting for your answer goes on with: codeloops queue answer <id> "<your answer>" ("codeloops queue list" shows which).'
        : 'Add one: codeloops queue add -p "<task>" (or --file tasks.md, a Markdown checklist).';
    case 'queue_running':
      return typeof details.pid === 'number'
        ? `Let it finish, or stop it ("kill ${details.pid}"): the next "codeloops queue run" carries on where it stopped.`
        : undefined;
    case 'queue_invalid':
      return typeof details.previous === 'string'
        ? `Go back to the queue as it was before its last change: mv "${details.previous}" "${String(details.file)}" (or move the file away to start an empty queue).`
        : `Move "${String(details.file)}" away to start an empty queue.`;
    case 'merge_conflict':
      return 'Merge it yourself to resolve them: git merge <the task\'s branch> ("codeloops queue list" shows it).';
    default:
      return queueShardHint(error);
  }
}

/** A queue across machines: `queue import` of the shards' bundles. */
function queueShardHint(error: CodeloopsError): string | undefined {
  const details = error.details;
  switch (error.code) {
    case 'queue_mismatch':
      return Array.isArray(details.tasks)
        ? 'Those tasks are not the ones of the queue file the shards ran: import into the repository whose queue was exported (or remove the tasks in the way: codeloops queue remove <id>).'
        : 'Import the bundles of one queue run: every shard from the same queue file (or checklist) at the same commit, with the same --shard total.';
    case 'shard_incomplete':
      return Array.isArray(details.unfinished) && details.unfinished.some((entry) => typeof entry === 'object')
        ? 'Carry that shard on where it ran (codeloops eval --resume <its eval> --export FILE) and merge its new bundle, or merge what it finished with --partial: its other runs stay missing here, for --resume.'
        : 'Run that shard again to finish its share (it carries on), or import the tasks it finished with --partial: the others stay queued here.';
    default:
      return undefined;
  }
}

function sessionOf(details: CodeloopsError['details']): string {
  return typeof details.session_id === 'string' ? details.session_id : '<session>';
}
