import fs from 'node:fs';
import path from 'node:path';
import type { Browser, FrameLocator, Locator, Page } from 'playwright-core';
import { launchChromium, packagedExtension, startCodeServer, type CodeServer } from './codeServer.js';
import { removeTempDirs, repoRoot } from './testEnvironment.js';

/**
 * The VS Code workbench in Chromium, as a user works it: the Command Palette, quick
 * inputs, notifications, dialogs, context menus, the status bar, editors and the
 * Codeloops view. The selectors are the workbench's own classes and `aria-label`s,
 * written here once, so that a test reads as the steps a user takes. Every wait is for
 * something a user would see.
 */

/** Matches exactly `text`: "Run Prompt" must not pick "Run Prompt with Candidates…". */
const exactly = (text: string): RegExp => new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);

export interface OpenOptions {
  /** Where the workbench's and its webviews' console messages go, for when a step fails. */
  consoleLog?: string;
}

/** Where the editor tests' screenshots and browser console logs land. */
export const EDITOR_OUTPUT = path.join(repoRoot(), 'test-output', 'vscode');

/**
 * For a suite of the packaged extension: `open` starts code-server over a folder with the
 * VSIX installed and Chromium on it, settled on the folder's branch `main`; the
 * workbench, the server and the temporary folders go after the suite, whatever happened.
 */
export function packagedWorkbenches(): { open(folder: string, env: NodeJS.ProcessEnv, consoleLog: string): Promise<Workbench> } {
  const opened: { server?: CodeServer; workbench?: Workbench } = {};
  after(async () => {
    await opened.workbench?.close();
    await opened.server?.stop();
    removeTempDirs();
  });
  return {
    async open(folder, env, consoleLog) {
      fs.mkdirSync(EDITOR_OUTPUT, { recursive: true });
      opened.server = await startCodeServer({ extension: { vsix: packagedExtension() }, folder, env });
      opened.workbench = await Workbench.open(opened.server, { consoleLog: path.join(EDITOR_OUTPUT, consoleLog) });
      await opened.workbench.settled('main');
      return opened.workbench;
    },
  };
}

export class Workbench {
  private constructor(
    private readonly browser: Browser,
    readonly page: Page,
  ) {}

  /** Chromium on the server's workbench, once it shows Codeloops. */
  static async open(server: CodeServer, options: OpenOptions = {}): Promise<Workbench> {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
      if (options.consoleLog) {
        const log = fs.createWriteStream(options.consoleLog);
        page.on('console', (message) => log.write(`[${message.type()}] ${message.text()}\n`));
        page.on('pageerror', (error) => log.write(`[pageerror] ${error.message}\n`));
      }
      await page.goto(server.url);
      const workbench = new Workbench(browser, page);
      await workbench.loaded();
      return workbench;
    } catch (error) {
      await browser.close();
      throw error;
    }
  }

  /**
   * The extensions that start with the window have started, as the status bar shows it:
   * Git's branch is there and nothing says "Activating Extensions" any more. (Git does not
   * run in Restricted Mode: an untrusted folder shows "Restricted Mode" instead.)
   */
  async settled(branch: string): Promise<void> {
    await this.statusBarItem(branch).waitFor({ timeout: 60_000 });
    await this.statusBarItem('Activating Extensions').waitFor({ state: 'detached', timeout: 60_000 });
  }

  close(): Promise<void> {
    return this.browser.close();
  }

  /** A screenshot of the workbench at rest: fades and slides shown finished. */
  async screenshot(file: string): Promise<void> {
    await this.page.screenshot({ path: file, animations: 'disabled' });
  }

  /** A screenshot of the editors' part alone (a webview page, say), at rest. */
  async screenshotEditors(file: string): Promise<void> {
    await this.page.locator('.part.editor').screenshot({ path: file, animations: 'disabled' });
  }

  // The Command Palette and quick inputs

  /** Runs the command of exactly that title from the Command Palette (F1), recently used or not. */
  async runCommand(title: string): Promise<void> {
    const palette = this.page.locator('.quick-input-widget input');
    const command = this.page.locator('.quick-input-list .monaco-list-row', { has: this.page.locator('.label-name', { hasText: exactly(title) }) }).first();
    // A webview just brought to the front takes the focus a moment later, and the palette
    // closes when it loses the focus: then, as a user would, press F1 again.
    for (let attempt = 1; ; attempt++) {
      await this.page.keyboard.press('F1');
      try {
        await palette.waitFor({ state: 'visible' });
        await palette.fill(`>${title}`, { timeout: 10_000 });
        await command.click({ timeout: 10_000 });
        return;
      } catch (error) {
        if (attempt === 3 || (await palette.isVisible())) throw error;
      }
    }
  }

  /** The quick input whose title or prompt says `title` (a question, or a step such as "(2/3)"), once it shows with the caret in its box. */
  async quickInput(title: string, timeout?: number): Promise<QuickInput> {
    const widget = this.page.locator('.quick-input-widget').filter({ hasText: title });
    await widget.waitFor({ timeout });
    const input = new QuickInput(this.page, widget);
    // A box shown while a notification or a view holds the focus may stay without the caret: a user clicks into it.
    if (
      !(await input.focused(5_000).then(
        () => true,
        () => false,
      ))
    ) {
      await widget.locator('input').click();
      await input.focused();
    }
    return input;
  }

  /** Clicks into the box of the quick input asking `question`, as a user does when it shows without the caret (it stays open while focus is elsewhere). */
  async clickIntoQuickInput(question: string): Promise<void> {
    await this.page.locator('.quick-input-widget').filter({ hasText: question }).locator('input').click();
  }

  /** Answers the quick input asking `question`: types `text` and presses Enter. */
  async answer(question: string, text: string): Promise<void> {
    const input = await this.quickInput(question);
    await input.fill(text);
    await input.accept();
  }

  // Notifications, dialogs, menus and the status bar

  /** The notification saying `text`, once it shows (as a toast, or in the Notifications center when that is open). */
  async notification(text: string, timeout = 30_000): Promise<Notification> {
    const notification = new Notification(this, text);
    await notification.shown.waitFor({ timeout });
    return notification;
  }

  /** The modal dialog, once it shows. */
  async dialog(): Promise<Dialog> {
    const box = this.page.locator('.monaco-dialog-box');
    await box.waitFor({ timeout: 30_000 });
    return new Dialog(box);
  }

  /** Right-clicks `target` and chooses `action`: hovered, then Enter, as the workbench's menus act on the focused entry. */
  async contextMenu(target: Locator, action: string): Promise<void> {
    await target.click({ button: 'right' });
    await this.page.locator('.monaco-menu .action-menu-item', { hasText: action }).hover();
    await this.page.keyboard.press('Enter');
  }

  statusBarItem(text: string | RegExp): Locator {
    return this.page.locator('.statusbar-item', { hasText: text });
  }

  // Editors

  editorTab(title: string | RegExp): Locator {
    return this.page.locator('.tab', { hasText: title }).first();
  }

  /** Brings the editor of that tab to the front. */
  async showEditor(title: string | RegExp): Promise<void> {
    await this.editorTab(title).click();
  }

  /** The content of the webview in front (the session viewer, the comparison page). */
  webview(): FrameLocator {
    return this.page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
  }

  /** The diff editor in front, once both sides are drawn and the change is marked on the right. */
  async diffEditor(): Promise<DiffEditor> {
    const editor = this.page.locator('.monaco-diff-editor').filter({ visible: true }).first();
    await editor.locator('.editor.modified :is(.line-insert, .char-insert)').first().waitFor();
    await editor.locator('.editor.original .view-line').first().waitFor();
    return new DiffEditor(editor);
  }

  /** A comment thread on an editor's lines (the critic's findings show as review comments). */
  commentThread(text: string): Locator {
    return this.page.locator('.review-widget', { hasText: text }).first();
  }

  /** Developer: Reload Window (the workbench saves its state first), until Codeloops shows again. */
  async reloadWindow(): Promise<void> {
    const reloaded = this.page.waitForEvent('load', { timeout: 60_000 });
    await this.runCommand('Developer: Reload Window');
    await reloaded;
    await this.loaded();
  }

  // The Codeloops view (the Sessions tree)

  /** The Sessions view, shown (clicking its icon when it is already shown would hide it). */
  async showCodeloopsView(): Promise<void> {
    const title = this.page.locator('.part.sidebar .title-label', { hasText: /codeloops/i });
    if (!(await title.isVisible())) await this.codeloopsIcon().click();
    await title.waitFor();
  }

  /** Drags the side bar's edge to make it `width` pixels wide, so that a tree's labels and descriptions show whole. */
  async widenSideBar(width: number): Promise<void> {
    const sideBar = (await this.page.locator('.part.sidebar').boundingBox())!;
    const edge = sideBar.x + sideBar.width;
    const sashes = await this.page.locator('.monaco-sash.vertical').evaluateAll((each) =>
      each.map((sash) => {
        const box = sash.getBoundingClientRect();
        return { x: box.x + box.width / 2, y: box.y + box.height / 2, height: box.height };
      }),
    );
    // The side bar's own sash: on its edge, as tall as it.
    const sash = sashes.filter((each) => Math.abs(each.x - edge) < 4 && each.height > sideBar.height / 2)[0];
    if (!sash) throw new Error(`no sash on the side bar's edge (x ${edge})`);
    await this.page.mouse.move(sash.x, sash.y);
    await this.page.mouse.down();
    await this.page.mouse.move(sideBar.x + width, sash.y, { steps: 10 });
    await this.page.mouse.up();
  }

  /** Presses a button of the Sessions view's title bar (Run Prompt, Refresh Sessions, Show Statistics…), as its tooltip names it. */
  async pressViewAction(title: string): Promise<void> {
    await this.showCodeloopsView();
    // With two views in the container (Sessions, Queue) each view's buttons are in its own header, shown while the pointer
    // is over it; a view redrawn meanwhile (a session listed) draws its header again, buttons hidden: hover it again.
    const action = `.action-label[aria-label^="${title}"]`;
    const header = this.page.locator('.part.sidebar .pane-header', { has: this.page.locator(action) }).first();
    const button = this.page.locator(`.part.sidebar ${action}`).first();
    for (let attempt = 1; ; attempt++) {
      if ((await header.count()) > 0) await header.hover();
      try {
        await button.click({ timeout: 5_000 });
        return;
      } catch (error) {
        if (attempt === 6) throw error;
      }
    }
  }

  /** Every entry of the Sessions view folded: an earlier test's open entries do not stand between a session and its children. */
  private async collapseAllSessions(): Promise<void> {
    await this.pressViewAction('Collapse All');
  }

  /** Tree entries whose label (`aria-label`: the name, then what the entry says about itself) matches. */
  treeItem(label: RegExp): Locator {
    return this.page.getByRole('treeitem', { name: label });
  }

  async treeItemLabels(label: RegExp): Promise<string[]> {
    return this.treeItem(label).evaluateAll((items) => items.map((item) => item.getAttribute('aria-label') ?? ''));
  }

  /** Opens (expands) the first entry of that label, whether or not it is open already. */
  private async expand(label: RegExp): Promise<void> {
    const item = this.treeItem(label).first();
    await item.waitFor();
    if ((await item.getAttribute('aria-expanded')) === 'false') await item.click();
  }

  /** The Sessions view with one session's iteration opened to its files, everything else folded. */
  async openIteration(session: RegExp, iteration: RegExp): Promise<void> {
    await this.showCodeloopsView();
    await this.collapseAllSessions();
    await this.expand(session);
    await this.expand(iteration);
  }

  private codeloopsIcon(): Locator {
    return this.page.locator('.activitybar .action-item a[aria-label^="Codeloops"]');
  }

  /** The workbench drawn with Codeloops in its activity bar: the extension's commands and views are in. */
  private async loaded(): Promise<void> {
    await this.page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    await this.codeloopsIcon().waitFor({ timeout: 60_000 });
  }
}

export class QuickInput {
  constructor(
    private readonly page: Page,
    private readonly widget: Locator,
  ) {}

  private get box(): Locator {
    return this.widget.locator('input');
  }

  async fill(text: string): Promise<void> {
    await this.box.fill(text);
  }

  value(): Promise<string> {
    return this.box.inputValue();
  }

  /** The entry of the list with that text. */
  option(text: string): Locator {
    return this.widget.locator('.quick-input-list .monaco-list-row', { hasText: text }).first();
  }

  /** Enter, once the caret is in the box. */
  async accept(): Promise<void> {
    await this.focused();
    await this.page.keyboard.press('Enter');
  }

  /** The caret in the box: a key pressed while the widget is still taking the focus is lost. */
  async focused(timeout?: number): Promise<void> {
    await this.page.waitForFunction(() => document.activeElement?.matches('.quick-input-widget input') ?? false, undefined, { timeout });
  }
}

export class Notification {
  constructor(
    private readonly workbench: Workbench,
    private readonly text: string,
  ) {}

  /** Where it shows: a toast, or the Notifications center's list. */
  get shown(): Locator {
    return this.workbench.page.locator('.notification-list-item').filter({ hasText: this.text, visible: true }).first();
  }

  /** Presses one of its buttons; from the Notifications center when its toast has gone, as a user would. */
  async press(button: string): Promise<void> {
    const click = (timeout?: number) =>
      this.shown
        .locator('.monaco-button', { hasText: exactly(button) })
        .first()
        .click({ timeout });
    if (!(await this.shown.isVisible())) await this.workbench.runCommand('Notifications: Show Notifications');
    try {
      await click(10_000);
    } catch {
      // The toast hid as it was pressed (detached from the page, nothing clicked): press it where it stays, in the Notifications center.
      await this.workbench.runCommand('Notifications: Show Notifications');
      await click();
    }
  }
}

export class Dialog {
  constructor(private readonly box: Locator) {}

  async text(): Promise<string> {
    return (await this.box.textContent()) ?? '';
  }

  /** Presses a button, and waits for the dialog to close. */
  async press(button: string): Promise<void> {
    await this.box.locator('.monaco-button', { hasText: exactly(button) }).click();
    await this.box.waitFor({ state: 'hidden' });
  }
}

export class DiffEditor {
  constructor(private readonly editor: Locator) {}

  /** The text of one side (Monaco draws spaces as no-break spaces). */
  async text(side: 'original' | 'modified'): Promise<string> {
    return ((await this.editor.locator(`.editor.${side} .view-lines`).textContent()) ?? '').replace(/\u00a0/g, ' ');
  }

  /** A line of the right-hand side, the one a user edits. */
  modifiedLine(text: string): Locator {
    return this.editor.locator('.editor.modified .view-line', { hasText: text });
  }
}
