import assert from 'node:assert/strict';
import { unsupportedPlatformMessage } from '../../src/process/platformSupport.js';

describe('platforms: where Codeloops runs', () => {
  it('runs on Linux and macOS, and refuses a native Windows, naming where to run it instead', () => {
    for (const platform of ['linux', 'darwin'] as const) {
      assert.equal(unsupportedPlatformMessage(platform, 'cli'), null, platform);
      assert.equal(unsupportedPlatformMessage(platform, 'editor'), null, platform);
    }
    const cli = unsupportedPlatformMessage('win32', 'cli');
    assert.match(cli ?? '', /Linux and macOS/);
    assert.match(cli ?? '', /process groups/);
    assert.match(cli ?? '', /in WSL .*over SSH.*in a dev container/);
    const editor = unsupportedPlatformMessage('win32', 'editor');
    assert.match(editor ?? '', /WSL, Remote - SSH or Dev Containers/);
    assert.match(editor ?? '', /sessions can be browsed here either way/);
  });
});
