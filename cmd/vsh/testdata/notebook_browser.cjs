// Opens a notebook in Jupyter's classic Notebook with headless Chromium
// (Debian's, through playwright-core), runs every cell with Cell → Run
// All, and prints what the page shows as JSON: the code cells, those with
// output, the error outputs, and the SVG pictures. Run by cmd/vsh's
// TestNotebookInJupyter: node notebook_browser.cjs URL CHROMIUM SCREENSHOT
const { chromium } = require('playwright-core');

(async () => {
  const [url, executablePath, screenshot] = process.argv.slice(2);
  const browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    await page.goto(url, { waitUntil: 'load', timeout: 60000 });
    // The kernel is up when the notebook says it is idle.
    await page.waitForFunction(() => window.Jupyter && Jupyter.notebook && Jupyter.notebook.kernel &&
      Jupyter.notebook.kernel.is_connected() && document.querySelector('#kernel_indicator_icon.kernel_idle_icon'), null, { timeout: 60000 });
    await page.click('#celllink');
    await page.click('#run_all_cells > a');
    // Run All is done when no cell waits ([*]) and the kernel is idle.
    await page.waitForFunction(() => {
      const cells = Jupyter.notebook.get_cells().filter(c => c.cell_type === 'code');
      return cells.every(c => c.input_prompt_number !== '*' && c.input_prompt_number != null) &&
        document.querySelector('#kernel_indicator_icon.kernel_idle_icon');
    }, null, { timeout: 120000, polling: 250 });
    // The replies (shell channel) and the outputs (iopub) reach the page
    // by different routes, so the last cells' outputs may still be on
    // their way: give them a while; a cell that never shows one is
    // reported below.
    await page.waitForFunction(() => [...document.querySelectorAll('.cell.code_cell')].every(c => c.querySelector('.output_area')),
      null, { timeout: 20000, polling: 250 }).catch(() => {});
    const seen = await page.evaluate(() => {
      const cells = [...document.querySelectorAll('.cell.code_cell')];
      return {
        code_cells: cells.length,
        with_output: cells.filter(c => c.querySelector('.output_area')).length,
        without_output: cells.filter(c => !c.querySelector('.output_area')).map(c => c.querySelector('.input_area').innerText.slice(0, 80)),
        errors: [...document.querySelectorAll('.output_error')].map(e => e.innerText.slice(0, 200)),
        svgs: document.querySelectorAll('.output_svg svg, .output_subarea svg').length,
        ladder: [...document.querySelectorAll('.output_svg svg, .output_subarea svg')].some(s => s.outerHTML.includes('SEND_FIRST')),
        tables: document.querySelectorAll('.output_html table.vsh-table').length,
      };
    });
    await page.screenshot({ path: screenshot, fullPage: false });
    console.log(JSON.stringify(seen));
  } finally {
    await browser.close();
  }
})().catch(e => { console.error(e); process.exit(1); });
