// The console's style: system fonts, readable on a phone (tables scroll inside their box, the menu wraps), visible
// focus for keyboard use, light and dark from the system's setting.

/** The page's stylesheet. */
export const PAGE_CSS = `:root{color-scheme:light dark;--fg:#1b1f24;--bg:#fff;--muted:#57606a;--line:#d0d7de;--accent:#0550ae;--danger:#a40e26;--soft:#f3f5f7;--bar:#0969da}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--muted:#9da7b3;--line:#30363d;--accent:#79c0ff;--danger:#ff7b72;--soft:#161b22;--bar:#58a6ff}}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
.skip{position:absolute;left:-999px}.skip:focus{left:8px;top:8px;background:var(--bg);padding:4px 8px;z-index:2}
.top{display:flex;flex-wrap:wrap;align-items:center;gap:8px 16px;padding:12px 16px;border-bottom:1px solid var(--line)}
.top h1{font-size:1.15rem;margin:0;flex:1 1 auto}
.who{margin:0;color:var(--muted);font-size:.9rem}
nav ul{display:flex;flex-wrap:wrap;gap:4px;list-style:none;margin:0;padding:8px 16px;border-bottom:1px solid var(--line)}
nav a{display:block;padding:6px 12px;border-radius:6px;color:var(--accent);text-decoration:none}
nav a[aria-current="page"]{background:var(--soft);color:var(--fg);font-weight:600}
main{padding:16px;max-width:1100px;margin:0 auto}
h2{font-size:1.3rem;margin:.2em 0 .6em}h3{font-size:1.05rem;margin:1.4em 0 .4em}
button{font:inherit;padding:6px 14px;border:1px solid var(--line);border-radius:6px;background:var(--soft);color:var(--fg);cursor:pointer;min-height:36px}
button:hover{border-color:var(--accent)}
button.danger{color:var(--danger)}
button[aria-pressed="true"]{background:var(--accent);color:var(--bg);border-color:var(--accent)}
a:focus-visible,button:focus-visible,input:focus-visible,textarea:focus-visible,main:focus-visible,summary:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
input,textarea{font:inherit;width:100%;max-width:40rem;padding:6px 8px;border:1px solid var(--muted);border-radius:6px;background:var(--bg);color:var(--fg)}
textarea{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.9rem}
label{display:block;font-weight:600;margin:.4em 0 .2em}
form .row,.row{display:flex;flex-wrap:wrap;gap:8px;margin:8px 0}
#sign-in-form{display:flex;flex-wrap:wrap;gap:8px;align-items:end}#sign-in-form label{width:100%}#sign-in-form input{flex:1 1 16rem}
.error{color:var(--danger);font-weight:600}.error:empty{display:none}
.status{min-height:1.5em;margin:0 0 8px;color:var(--muted)}
.muted{color:var(--muted)}
.table{overflow-x:auto;border:1px solid var(--line);border-radius:6px;margin:8px 0}
table{border-collapse:collapse;width:100%;font-size:.95rem}
th,td{text-align:left;padding:6px 10px;border-bottom:1px solid var(--line);white-space:nowrap}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
tr:last-child td{border-bottom:0}
caption{text-align:left;padding:6px 10px;color:var(--muted)}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.88rem}
pre{background:var(--soft);border:1px solid var(--line);border-radius:6px;padding:10px;overflow:auto;max-height:28rem;white-space:pre-wrap;word-break:break-word}
.detail{border:1px solid var(--line);border-radius:8px;padding:12px 16px;margin:16px 0}
.detail dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:0}.detail dt{color:var(--muted)}.detail dd{margin:0;word-break:break-all}
.confirm{border:2px solid var(--danger);border-radius:8px;padding:8px 12px;margin:8px 0}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(10rem,1fr));gap:8px}
.card{border:1px solid var(--line);border-radius:8px;padding:8px 12px}.card b{display:block;font-size:1.4rem}
.chart{margin:8px 0;max-width:48rem}.chart svg{display:block;width:100%;height:auto}
.chart rect.bar{fill:var(--bar)}.chart text{fill:var(--muted);font-size:11px}.chart line{stroke:var(--line)}
.badge{display:inline-block;padding:0 8px;border-radius:10px;border:1px solid var(--line);font-size:.85rem}
.badge.open,.badge.failed,.badge.cancelled{color:var(--danger);border-color:var(--danger)}
@media (max-width:600px){main{padding:10px}th,td{padding:6px}.top{padding:10px}}
`
