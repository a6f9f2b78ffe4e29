// The HTML page of two merged demo runs in headless Chromium, and the files `run` writes at its end.
import Foundation
import StallwatchTestSupport
import Testing

@Suite(.serialized) struct ReportPageTests {
    /// Chromium's flags for a page from disk, in its own profile directory, logging the page's console to stderr.
    static func chromium(_ arguments: [String], profile: String) throws -> RunResult {
        let chromium = try #require(TestTool.chromium, "chromium is missing: Scripts/install-test-tools installs it")
        return try TestTool.run(
            chromium,
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=\(profile)", "--enable-logging=stderr",
                "--log-level=0", "--window-size=1280,1400", "--hide-scrollbars",
            ] + arguments)
    }

    static let interactionScript = #"""
        <script>
        try {
          const all = () => [...document.querySelectorAll("#flame-all .node")];
          const before = all().length;
          console.log("nodes=" + before);
          all().find((node) => node.dataset.name === "AccountStore.waitForAccountLock()").click();
          const zoomed = all().filter((node) => node.dataset.name === "AccountStore.waitForAccountLock()");
          console.log("zoomed width=" + zoomed[0].style.width + " nodes=" + all().length);
          all()[0].click();
          console.log("zoomed out nodes=" + all().length);
          const header = document.querySelector('#groups th[data-column="4"]');
          header.click();
          const first = () => document.querySelector("#groups tbody tr").dataset.fingerprint;
          console.log("sorted by stalls first=" + first());
          header.click();
          console.log("reversed first=" + first());
          document.querySelector(".bar").dispatchEvent(new MouseEvent("mouseenter"));
          console.log("hovered=" + document.querySelector("#details h3").textContent);
        } catch (error) { console.log("ERROR " + error); }
        </script>
        </body>
        """#

    /// The console lines of a copy of the page with ``interactionScript`` at its end.
    static func interact(with page: String, profile: String) throws -> String {
        let copy = page + ".interact.html"
        defer { try? FileManager.default.removeItem(atPath: copy) }
        let html = try String(contentsOfFile: page, encoding: .utf8)
        try html.replacingOccurrences(of: "</body>", with: interactionScript)
            .write(toFile: copy, atomically: true, encoding: .utf8)
        let result = try chromium(["--dump-dom", "file://" + copy], profile: profile)
        return result.stderr.split(separator: "\n").filter { $0.contains(":CONSOLE") }.joined(separator: "\n")
    }

    /// The flame graph's node count before zooming, from the first console line.
    static func nodeCount(_ console: String) -> Int? {
        console.split(separator: "\n").first.flatMap { line in
            line.split(separator: "\"").dropFirst().first.flatMap { Int($0.dropFirst("nodes=".count)) }
        }
    }

    @Test(.enabled(if: TestTool.available(TestTool.chromium), "chromium (Debian chromium) is not installed"))
    func thePageOfTwoRunsRendersWithTheirBarsAndCulprits() throws {
        let files = DemoRecords.files
        let page = scratchFile("stalls.html")
        let screenshot = scratchFile("stalls.png")
        let profile = scratchFile("chromium-profile")
        defer {
            for path in [page, screenshot, profile] { try? FileManager.default.removeItem(atPath: path) }
        }
        let written = try runStallwatch(["report", "--html", page] + files)
        #expect(written.status == 0 && written.stdout.isEmpty, "\(written.stderr)")
        let dom = try Self.chromium(["--dump-dom", "file://" + page], profile: profile)
        #expect(dom.status == 0, "\(dom.stderr)")
        let console = dom.stderr.split(separator: "\n").filter { $0.contains(":CONSOLE") }
        #expect(console.isEmpty, "the page's script logged: \(console)")
        // The script drew one bar per stall, the table and the flame graphs (all stalls, and one per fingerprint).
        #expect(dom.stdout.components(separatedBy: #"<div class="bar""#).count - 1 == 2, "\(dom.stdout.prefix(3000))")
        #expect(dom.stdout.contains(">\(DemoRecords.mutexCulprit)</td>"), "the mutex run's culprit is in the table")
        #expect(dom.stdout.contains(">static \(DemoRecords.cpuCulprit)(until:)</td>"), "and the CPU run's")
        #expect(dom.stdout.contains(#"id="flame-all""#))
        #expect(dom.stdout.components(separatedBy: #"class="flame""#).count - 1 == 3)
        #expect(dom.stdout.contains("2 stalls ("), "the overview line was filled in")
        // What a click on the first bar shows, and a search, through the page's links (#stall=, #search=).
        let clicked = try Self.chromium(
            ["--dump-dom", "file://" + page + "#stall=0&search=waitForAccountLock"], profile: profile)
        #expect(clicked.stderr.split(separator: "\n").filter { $0.contains(":CONSOLE") }.isEmpty, "\(clicked.stderr)")
        #expect(clicked.stdout.contains("culprit: \(DemoRecords.mutexCulprit) at "), "the first run is the mutex one")
        #expect(clicked.stdout.contains("Culprits.swift:"), "the culprit's file and line are shown")
        #expect(clicked.stdout.contains("sample 1 at +"), "and its samples")
        #expect(clicked.stdout.contains(#"class="node hit" "#), "the search marks the matching frames")
        #expect(!dom.stdout.contains(#"class="node hit" "#), "which nothing marks without a search")
        // Zooming, zooming out, sorting and hovering, by a script the test adds at the end of a copy of the page.
        let interactions = try Self.interact(with: page, profile: profile)
        #expect(interactions.contains("zoomed width=100%"), "\(interactions)")
        #expect(interactions.contains("zoomed out nodes=\(try #require(Self.nodeCount(interactions)))"))
        #expect(interactions.contains("sorted by stalls first=") && interactions.contains("reversed first="))
        #expect(!interactions.contains("ERROR"), "\(interactions)")
        #expect(interactions.contains("hovered=") && interactions.contains(": \(DemoRecords.mutexCulprit)"))
        let shot = try Self.chromium(["--screenshot=\(screenshot)", "file://" + page], profile: profile)
        #expect(shot.status == 0, "\(shot.stderr)")
        let image = try Data(contentsOf: URL(fileURLWithPath: screenshot))
        #expect(image.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        // A blank 1280×1400 page compresses to a few kilobytes; bars, text and flame graphs do not.
        #expect(image.count > 50_000, "\(image.count) bytes")
    }

    /// `attach --max-frames 4096 --html` on a deep recursion: the page drew its flame graph by recursion and threw
    /// `RangeError: Maximum call stack size exceeded` past ~2,500 frames.
    @Test(.enabled(if: TestTool.available(TestTool.chromium), "chromium (Debian chromium) is not installed"))
    func aFiveThousandFrameStackIsDrawnWhole() throws {
        let depth = 5000
        let records = scratchFile("deep.ndjson")
        let page = scratchFile("deep.html")
        let profile = scratchFile("chromium-profile")
        defer {
            for path in [records, page, profile] { try? FileManager.default.removeItem(atPath: path) }
        }
        // Innermost first: the leaf, then one recursive function 4,998 times, then main.
        let frames =
            [RecordFixtures.frame("Leaf.blocking()", address: 0x3000)]
            + (1..<depth - 1).map { RecordFixtures.frame("Tree.walk(depth:)", address: 0x2000 + UInt64($0 % 7)) }
            + [RecordFixtures.frame("main", address: 0x1100)]
        try (RecordFixtures.stall(samples: [(240, frames)]) + "\n" + RecordFixtures.summary() + "\n")
            .write(toFile: records, atomically: false, encoding: .utf8)
        let written = try runStallwatch(["report", "--html", page, records])
        #expect(written.status == 0, "\(written.stderr)")
        let dom = try Self.chromium(["--dump-dom", "file://" + page], profile: profile)
        #expect(dom.status == 0, "\(dom.stderr)")
        let console = dom.stderr.split(separator: "\n").filter { $0.contains(":CONSOLE") }
        #expect(console.isEmpty, "the page's script logged: \(console.prefix(3))")
        // Every frame is a node of the all-stalls graph (and of the fingerprint's), the leaf at the bottom.
        let allStalls = try #require(dom.stdout.range(of: #"id="flame-all""#), "no flame graph was drawn")
        let nodes = dom.stdout[allStalls.upperBound...].components(separatedBy: #"<div class="node "#).count - 1
        #expect(nodes >= 2 * (depth + 1), "\(nodes) nodes: the graphs were cut short")
        #expect(dom.stdout.contains(#"data-name="Leaf.blocking()""#), "the innermost frame was drawn")
    }

    @Test func runWritesItsFilesAfterATimeout() throws {
        let page = scratchFile("timeout.html")
        let folded = scratchFile("timeout.folded")
        defer {
            try? FileManager.default.removeItem(atPath: page)
            try? FileManager.default.removeItem(atPath: folded)
        }
        let result = try runStallwatch([
            "demo", "--scenario", "mutex", "--timeout", "1500ms", "--html", page, "--export", "folded=\(folded)",
            "--", "--stalls", "3", "--duration", "3s", "--period", "4s",
        ])
        #expect(result.status == 124, "\(result.stderr)")
        let html = try String(contentsOfFile: page, encoding: .utf8)
        #expect(html.contains(#""unfinished":true"#), "the stall cut short by the timeout is on the page")
        #expect(html.contains(DemoRecords.mutexCulprit))
        let stacks = try String(contentsOfFile: folded, encoding: .utf8)
        #expect(stacks.contains(DemoRecords.mutexCulprit + ";"), "\(stacks)")
    }

    @Test func runWritesItsPageWhenTheBudgetIsBroken() throws {
        let page = scratchFile("budget.html")
        defer { try? FileManager.default.removeItem(atPath: page) }
        let result = try runStallwatch([
            "demo", "--fail-on-stall", "--format", "json", "--html", page, "--", "--stalls", "1",
        ])
        #expect(result.status == 80, "\(result.stderr)")
        let html = try String(contentsOfFile: page, encoding: .utf8)
        let fingerprint = try #require(try result.stalls.first?.fingerprint)
        #expect(html.contains(#""fp":"\#(fingerprint)""#))
        #expect(try result.stalls.first?.host != nil, "records written by the command line carry a host")
    }
}

@Suite(.serialized) struct ReportEndingTests {
    @Test func runWritesItsPageAfterSIGINT() throws {
        let page = scratchFile("sigint.html")
        defer { try? FileManager.default.removeItem(atPath: page) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Products.stallwatch)
        process.arguments = ["demo", "--scenario", "sleep", "--html", page, "--", "--stalls", "5"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The first stall (the demo's lead-in, then 600 ms) is over by 1.5 s; the run is not.
        Thread.sleep(forTimeInterval: 1.5)
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        let html = try String(contentsOfFile: page, encoding: .utf8)
        #expect(html.contains("usleep") || html.contains("nanosleep"), "the sleep stall's stack is on the page")
        #expect(html.contains(#""stalls":["#))
    }

    @Test func reportReadsStandardInput() throws {
        let input = try #require(FileHandle(forReadingAtPath: DemoRecords.files[0]))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Products.stallwatch)
        process.arguments = ["report", "--format", "folded", "-"]
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(text.contains(DemoRecords.mutexCulprit + ";"), "\(text)")
    }

    @Test func anOutputThatCannotBeWrittenIsExit73() throws {
        let result = try runStallwatch(["report", "--output", "/nonexistent/dir/out.txt", DemoRecords.files[0]])
        #expect(result.status == 73)
        #expect(result.stderr.contains("cannot write '/nonexistent/dir/out.txt'"), "\(result.stderr)")
    }
}
