// Drive audit.html in jsdom (tests/test_report_audit.py): keyboard sort, numeric sort, test and model filters,
// the setting selector; prints one JSON object.
const { JSDOM } = require('jsdom');
const fs = require('fs');
const html = fs.readFileSync(process.argv[2], 'utf8');
const dom = new JSDOM(html, { runScripts: 'dangerously' });
const d = dom.window.document;
const errors = [];
dom.window.addEventListener('error', e => errors.push(e.message));
const table = d.querySelector('section.setting:not([hidden]) table.audit');
const models = () => [...table.tBodies[0].rows].filter(r => r.style.display !== 'none').map(r => r.querySelector('th.model').textContent);
const out = { rows: models().length };
// sort by a test column via keyboard
const th = table.querySelectorAll('th.test')[2];
th.dispatchEvent(new dom.window.KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
const col = +th.dataset.col;
const vals = [...table.tBodies[0].rows].map(r => r.children[col].dataset.v).filter(v => v !== '').map(parseFloat);
out.sorted = JSON.stringify(vals) === JSON.stringify([...vals].sort((a, b) => b - a)) && vals.length > 0;
out.ariaSort = th.getAttribute('aria-sort');
// numeric metadata sort
const meta = [...table.querySelectorAll('th.meta')].find(h => h.textContent === 'parameters');
meta.click();
const pv = [...table.tBodies[0].rows].map(r => parseFloat(r.children[+meta.dataset.col].dataset.v));
out.numeric = JSON.stringify(pv) === JSON.stringify([...pv].sort((a, b) => b - a));
// filter by test name
const f = d.getElementById('filter');
f.value = 'mixed-3'; f.dispatchEvent(new dom.window.Event('input'));
const shownCols = [...table.querySelectorAll('th.test')].filter(h => h.style.display !== 'none').map(h => h.title);
out.testFilter = [shownCols, models().length];
f.value = 'model-01'; f.dispatchEvent(new dom.window.Event('input'));
out.modelFilter = models();
// setting selector
const sel = d.getElementById('setting'); sel.value = '1'; sel.dispatchEvent(new dom.window.Event('change'));
out.hidden = [...d.querySelectorAll('section.setting')].map(s => s.hidden);
out.errors = errors;
console.log(JSON.stringify(out));
