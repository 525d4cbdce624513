import { defineConfig } from '@playwright/test';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './test/support/chromium.js';

// The end-to-end tests drive the system Chromium (Debian's, or CHROME_PATH):
// Playwright's own browser downloads are not used. WebGPU comes from
// SwiftShader when there is no GPU, which needs --enable-unsafe-webgpu and a
// page on http://localhost.
// The dev server's port; BYTELAB_E2E_PORT moves it off one already in use.
const PORT = Number(process.env.BYTELAB_E2E_PORT) || 5199;

export default defineConfig({
  testDir: 'test/e2e',
  timeout: 240_000,
  expect: { timeout: 30_000 },
  workers: 1,
  retries: 0,
  reporter: [['list'], ['json', { outputFile: 'test-results/e2e.json' }]],
  outputDir: 'test-results/artifacts',
  use: {
    baseURL: `http://localhost:${PORT}`,
    viewport: { width: 1400, height: 900 },
    launchOptions: { executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS },
  },
  webServer: {
    command: `npx tsx test/e2e/broken-dataset.ts && npx vite --host localhost --port ${PORT} --strictPort`,
    url: `http://localhost:${PORT}`,
    reuseExistingServer: false,
    timeout: 120_000,
  },
});
