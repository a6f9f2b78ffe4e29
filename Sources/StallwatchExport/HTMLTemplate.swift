// The HTML page's markup, style and script; HTMLExporter puts the data where the marker is.

/// The page: no external resource of any kind, so it opens from disk and from a CI artifact viewer alike.
enum HTMLTemplate {
    static let dataMarker = "@@STALLWATCH_DATA@@"

    static let page =
        #"""
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>stallwatch report</title>
        <style>
        """# + HTMLStyle.css
            + #"""
            </style>
            </head>
            <body>
            <header>
            <h1>stallwatch report</h1>
            <p id="overview"></p>
            </header>
            <section id="timeline-section">
            <h2>Timeline</h2>
            <p class="hint">Each bar is a stall at its real start and length on its thread; hatched bars were
            unfinished when the run ended, thin grey bars are dropped frames. Hover or click a bar for the stall.</p>
            <div id="timeline"></div>
            <div id="details" class="details" hidden></div>
            </section>
            <section id="table-section">
            <h2>Fingerprints</h2>
            <p class="hint">Stalls grouped by fingerprint across all inputs. Click a column to sort, a row for its
            flame graph.</p>
            <div class="table-box"><table id="groups"><thead></thead><tbody></tbody></table></div>
            </section>
            <section id="flame-section">
            <h2>Flame graphs</h2>
            <p class="hint">Where the stalled time went, outermost frame at the top; width is stalled time. Click a
            frame to zoom, the top bar to zoom out. <span class="key app">application</span>
            <span class="key lib">library</span> <span class="key hit">search match</span></p>
            <label class="search">Search <input id="search" type="search" placeholder="function name"></label>
            <div id="flames"></div>
            </section>
            <script type="application/json" id="stallwatch-data">@@STALLWATCH_DATA@@</script>
            <script>
            """# + HTMLScript.timeline + HTMLScript.flames + HTMLScript.table
            + #"""
            </script>
            </body>
            </html>

            """#
}
