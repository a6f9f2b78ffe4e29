// The HTML page's style: readable on a laptop screen and in print, no web fonts.

enum HTMLStyle {
    static let css = #"""
        :root { --app: #e8743b; --lib: #7aa6c2; --hit: #d63384; --stall: #c0392b; --ink: #222; --muted: #666; }
        * { box-sizing: border-box; }
        body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); margin: 0 auto;
          max-width: 1400px; padding: 0 1.5rem 3rem; }
        h1 { font-size: 1.5rem; margin: 1rem 0 0.25rem; }
        h2 { font-size: 1.15rem; margin: 1.75rem 0 0.25rem; border-bottom: 1px solid #ddd; }
        .hint { color: var(--muted); margin: 0.25rem 0 0.75rem; }
        .run { margin: 0.75rem 0; }
        .run-title { font-weight: 600; margin-bottom: 0.2rem; }
        .track { display: flex; align-items: center; margin: 0.15rem 0; }
        .track-label { width: 15rem; flex: none; font-size: 12px; color: var(--muted); overflow: hidden;
          text-overflow: ellipsis; white-space: nowrap; }
        .lane { position: relative; flex: 1; height: 22px; background: #f4f4f4; border-radius: 3px; }
        .bar { position: absolute; top: 2px; height: 18px; min-width: 3px; background: var(--stall);
          border-radius: 2px; cursor: pointer; }
        .bar:hover, .bar.selected { outline: 2px solid var(--ink); }
        .bar.unfinished { background: repeating-linear-gradient(45deg, var(--stall), var(--stall) 4px,
          #f5b7b1 4px, #f5b7b1 8px); }
        .drop { position: absolute; bottom: 0; height: 4px; background: #888; }
        .axis { display: flex; justify-content: space-between; margin-left: 15rem; font-size: 11px;
          color: var(--muted); }
        .details { border: 1px solid #ccc; border-radius: 4px; padding: 0.5rem 0.75rem; margin-top: 0.5rem;
          background: #fffdf7; max-height: 24rem; overflow-y: auto; }
        .details summary { cursor: pointer; }
        .details .blocker { margin-top: 0.25rem; font-weight: 600; }
        .details .deadlock { color: #b00020; }
        .details h3 { margin: 0 0 0.25rem; font-size: 1rem; }
        .details ol { margin: 0.25rem 0; padding-left: 1.5rem; font-family: ui-monospace, monospace;
          font-size: 12px; }
        .table-box { overflow-x: auto; }
        table { border-collapse: collapse; width: 100%; font-size: 13px; }
        th, td { border-bottom: 1px solid #e3e3e3; padding: 0.3rem 0.5rem; text-align: left;
          vertical-align: top; }
        th { cursor: pointer; user-select: none; background: #fafafa; white-space: nowrap; }
        th.sorted::after { content: " \25BE"; }
        th.sorted.ascending::after { content: " \25B4"; }
        td.number { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
        tbody tr { cursor: pointer; }
        tbody tr:hover { background: #fff4ec; }
        code, .mono { font-family: ui-monospace, monospace; font-size: 12px; }
        .search { display: inline-block; margin-bottom: 0.5rem; }
        .flame { margin: 1rem 0 1.5rem; }
        .flame-title { font-weight: 600; }
        .flame-canvas { position: relative; overflow: hidden; border: 1px solid #eee; }
        .node { position: absolute; height: 18px; font-size: 11px; line-height: 18px; padding: 0 3px;
          overflow: hidden; white-space: nowrap; text-overflow: ellipsis; border: 1px solid #fff;
          cursor: pointer; color: #111; }
        .node.app, .key.app { background: var(--app); }
        .node.lib, .key.lib { background: var(--lib); }
        .node.hit, .key.hit { background: var(--hit); color: #fff; }
        .node.dim { opacity: 0.35; }
        .key { padding: 0 0.4rem; border-radius: 3px; font-size: 12px; }
        @media print {
          body { max-width: none; padding: 0; font-size: 11px; }
          .search, .hint { display: none; }
          .details { max-height: none; }
          .flame, .run, tr { break-inside: avoid; }
          .bar, .node, .key { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
        }

        """#
}
