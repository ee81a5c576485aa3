import { agentWaitingText, type AgentWaiting } from '../../sessionFormat/eventWording.js';
import type { EditorWindow } from '../editorPorts.js';

/**
 * A loop waits for an agent's usage limit (the limits' `agent_waiting` run event:
 * agent, reason, until): a notification says until when, and Stop ends the loop
 * there (its session `interrupted`) for a user who would rather not wait. It takes no
 * focus and needs no answer: the loop carries on by itself once the limit resets.
 */
export function tellAgentWaiting(window: EditorWindow, folderName: string, waiting: AgentWaiting, stop: () => unknown): void {
  const stopNow = 'Stop';
  void window.showInfo(`Codeloops in ${folderName} is ${agentWaitingText(waiting)}.`, stopNow).then((choice) => {
    if (choice === stopNow) void stop();
  });
}
