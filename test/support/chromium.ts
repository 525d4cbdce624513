// How the tests and benchmarks start the browser: the system Chromium (Debian's,
// or CHROME_PATH), never a downloaded one, with WebGPU on (SwiftShader when
// there is no GPU) and no background network traffic.
export const CHROMIUM_PATH = process.env.CHROME_PATH || '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--enable-unsafe-webgpu',
  '--enable-features=Vulkan',
  '--no-sandbox',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
