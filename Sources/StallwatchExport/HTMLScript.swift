// The HTML page's script, in three parts: the timeline, the flame graphs, the table of fingerprints.

enum HTMLScript {
    static let timeline = #"""
        "use strict";
        const data = JSON.parse(document.getElementById("stallwatch-data").textContent);
        const frameName = (index) => (index === null || index === undefined ? "no culprit" : data.frames[index].n);
        const frameWhere = (index) => (index === null || index === undefined ? null : data.frames[index].l);
        const ms = (value) => (value === null || value === undefined ? "–"
          : value >= 1000 ? (value / 1000).toFixed(2) + " s" : Math.round(value) + " ms");
        const when = (value) => new Date(value).toISOString().replace("T", " ").replace("Z", " UTC");
        function element(tag, attributes, text) {
          const node = document.createElement(tag);
          for (const [key, value] of Object.entries(attributes || {})) node.setAttribute(key, value);
          if (text !== undefined) node.textContent = text;
          return node;
        }
        function headline(stall) {
          const kind = stall.unfinished ? "unfinished stall" : "stall";
          const callout = stall.callout ? " in a " + stall.callout + " callout" : "";
          return ms(stall.dur) + " " + kind + callout + ": " + frameName(stall.culprit);
        }
        function showStall(index, bar) {
          const stall = data.stalls[index];
          const panel = document.getElementById("details");
          document.querySelectorAll(".bar.selected").forEach((node) => node.classList.remove("selected"));
          if (bar) bar.classList.add("selected");
          panel.hidden = false;
          panel.replaceChildren();
          panel.append(element("h3", {}, headline(stall)));
          const where = frameWhere(stall.culprit);
          panel.append(element("div", { class: "mono" }, "culprit: " + frameName(stall.culprit)
            + (where ? " at " + where : "")));
          panel.append(element("div", {}, stall.process + " pid " + stall.pid + ", tid " + stall.tid + ", stall "
            + stall.id + ", on " + stall.host + ", started " + when(stall.start) + ", fingerprint " + stall.fp
            + (stall.verdict ? ", thread " + stall.verdict : "")));
          if (stall.blocker) {
            panel.append(element("div", { class: stall.blocker.dl ? "blocker deadlock" : "blocker" },
              (stall.blocker.dl ? "DEADLOCK: " : "") + stall.blocker.s));
            if (stall.blocker.hs !== null) {
              const box = element("details", { open: "", class: "holder" });
              box.append(element("summary", {}, "stack of " + stall.blocker.h + ", which the stalled thread waited on"));
              const list = element("ol");
              data.stacks[stall.blocker.hs].slice().reverse().slice(0, 16).forEach((frame) => {
                list.append(element("li", {}, data.frames[frame].n + (data.frames[frame].l
                  ? "  (" + data.frames[frame].l + ")" : "")));
              });
              box.append(list);
              panel.append(box);
            }
          }
          stall.samples.forEach((sample, number) => {
            const stack = data.stacks[sample[1]];
            const box = element("details", number === 0 ? { open: "" } : {});
            box.append(element("summary", {}, "sample " + (number + 1) + " at +" + ms(sample[0]) + " (stands for "
              + ms(sample[2]) + (sample[3] ? ", state " + sample[3] : "") + ")"));
            panel.append(box);
            const list = element("ol");
            stack.slice().reverse().slice(0, 12).forEach((frame) => {
              const item = element("li", {}, data.frames[frame].n + (data.frames[frame].l
                ? "  (" + data.frames[frame].l + ")" : ""));
              list.append(item);
            });
            box.append(list);
          });
          if (stall.samples.length === 0) panel.append(element("div", {}, "No stack was captured."));
        }
        function drawTimeline() {
          const root = document.getElementById("timeline");
          data.runs.forEach((run, runIndex) => {
            const stalls = [];
            data.stalls.forEach((stall, index) => { if (stall.run === runIndex) stalls.push(index); });
            if (stalls.length === 0 && run.drops.length === 0) return;
            const starts = stalls.map((i) => data.stalls[i].start).concat(run.drops.map((d) => d[1]));
            const ends = stalls.map((i) => data.stalls[i].start + data.stalls[i].dur)
              .concat(run.drops.map((d) => d[1] + d[2]));
            const begin = Math.min(...starts);
            const span = Math.max(1, Math.max(...ends) - begin) * 1.02;
            const box = element("div", { class: "run" });
            box.append(element("div", { class: "run-title" }, run.source + (run.ordinal > 1 ? " (run " + run.ordinal
              + ")" : "") + " on " + run.host + ", from " + when(begin)));
            const tracks = new Map();
            const track = (pid, tid, process) => {
              const key = pid + "/" + tid;
              if (!tracks.has(key)) {
                const row = element("div", { class: "track" });
                row.append(element("div", { class: "track-label", title: process + " pid " + pid + " tid " + tid },
                  process + " " + pid + (tid === pid ? " main" : " tid " + tid)));
                const lane = element("div", { class: "lane" });
                row.append(lane);
                box.append(row);
                tracks.set(key, lane);
              }
              return tracks.get(key);
            };
            stalls.forEach((index) => {
              const stall = data.stalls[index];
              const bar = element("div", { class: "bar" + (stall.unfinished ? " unfinished" : ""),
                title: headline(stall) + (frameWhere(stall.culprit) ? " (" + frameWhere(stall.culprit) + ")" : ""),
                "data-stall": String(index), "data-fingerprint": stall.fp });
              bar.style.left = ((stall.start - begin) / span * 100) + "%";
              bar.style.width = (stall.dur / span * 100) + "%";
              bar.addEventListener("click", () => showStall(index, bar));
              bar.addEventListener("mouseenter", () => showStall(index, bar));
              track(stall.pid, stall.tid, stall.process).append(bar);
            });
            run.drops.forEach((drop) => {
              const mark = element("div", { class: "drop", title: "dropped frames for " + ms(drop[2]) });
              mark.style.left = ((drop[1] - begin) / span * 100) + "%";
              mark.style.width = Math.max(0.2, drop[2] / span * 100) + "%";
              track(drop[0], drop[0], "pid").append(mark);
            });
            const axis = element("div", { class: "axis" });
            for (let step = 0; step <= 4; step++) axis.append(element("span", {}, "+" + ms(span * step / 4)));
            box.append(axis);
            root.append(box);
          });
          if (!root.children.length) root.append(element("p", {}, "No stalls."));
        }

        """#

    static let flames = #"""
        function flameTree(stallIndices) {
          const root = { name: "all", frame: -1, value: 0, children: new Map() };
          stallIndices.forEach((index) => {
            const stall = data.stalls[index];
            const samples = stall.samples.length ? stall.samples : [[0, -1, stall.dur, null]];
            samples.forEach((sample) => {
              const stack = sample[1] >= 0 ? data.stacks[sample[1]] : [];
              root.value += sample[2];
              let node = root;
              const path = stack.length ? stack : [-1];
              path.forEach((frame) => {
                const name = frame >= 0 ? data.frames[frame].n : "[no stack captured]";
                if (!node.children.has(name)) node.children.set(name, { name, frame, value: 0,
                  children: new Map(), parent: node });
                node = node.children.get(name);
                node.value += sample[2];
              });
            });
          });
          return root;
        }
        const flameGraphs = [];
        function drawFlame(graph) {
          const canvas = graph.canvas;
          canvas.replaceChildren();
          const query = document.getElementById("search").value.trim().toLowerCase();
          const rowHeight = 18;
          let depthMax = 0;
          const zoom = graph.zoom;
          const ancestors = [];
          for (let node = zoom.parent; node; node = node.parent) ancestors.unshift(node);
          ancestors.forEach((node, depth) => {
            const box = element("div", { class: "node lib", title: "zoom out to " + node.name, "data-name": node.name });
            box.style.left = "0%";
            box.style.width = "100%";
            box.style.top = (depth * rowHeight) + "px";
            box.textContent = "\u2191 " + node.name;
            box.addEventListener("click", () => { graph.zoom = node; drawFlame(graph); });
            canvas.append(box);
          });
          // Depth first with a stack of its own, not by recursion: a 5,000-frame stack would overflow the
          // browser's call stack (RangeError) and leave the graph empty.
          const pending = [[zoom, ancestors.length, 0, 100]];
          while (pending.length) {
            const [node, depth, left, width] = pending.pop();
            if (width < 0.05) continue;
            depthMax = Math.max(depthMax, depth);
            const lib = node.frame < 0 ? true : data.frames[node.frame].lib;
            const hit = query && node.name.toLowerCase().includes(query);
            const box = element("div", { class: "node " + (hit ? "hit" : lib ? "lib" : "app"),
              title: node.name + (node.frame >= 0 && data.frames[node.frame].l ? " (" + data.frames[node.frame].l
                + ")" : "") + ": " + ms(node.value) + ", " + (node.value / graph.root.value * 100).toFixed(1) + "%",
              "data-name": node.name });
            if (query && !hit) box.classList.add("dim");
            box.style.left = left + "%";
            box.style.width = width + "%";
            box.style.top = (depth * rowHeight) + "px";
            box.textContent = node.name;
            box.addEventListener("click", () => {
              graph.zoom = node === graph.zoom && node.parent ? node.parent : node;
              drawFlame(graph);
            });
            canvas.append(box);
            let offset = left;
            const children = [];
            [...node.children.values()].sort((a, b) => b.value - a.value).forEach((child) => {
              const childWidth = node.value > 0 ? width * child.value / node.value : 0;
              children.push([child, depth + 1, offset, childWidth]);
              offset += childWidth;
            });
            // Last pushed, first drawn: children in order, each one's subtree before the next child.
            for (let index = children.length - 1; index >= 0; index--) pending.push(children[index]);
          }
          canvas.style.height = ((depthMax + 1) * rowHeight + 2) + "px";
        }
        function addFlame(title, stallIndices, id) {
          const root = flameTree(stallIndices);
          const box = element("div", { class: "flame", id });
          box.append(element("div", { class: "flame-title" }, title + " — " + ms(root.value) + " stalled"));
          const canvas = element("div", { class: "flame-canvas" });
          box.append(canvas);
          document.getElementById("flames").append(box);
          const graph = { root, zoom: root, canvas };
          flameGraphs.push(graph);
          drawFlame(graph);
        }
        function drawFlames() {
          addFlame("All stalls (" + data.stalls.length + ")", data.stalls.map((_, index) => index), "flame-all");
          data.groups.slice(0, 50).forEach((group) => addFlame(frameName(group.culprit) + " [" + group.fp + "], "
            + group.stalls.length + " stalls", group.stalls, "flame-" + group.fp));
          if (data.groups.length > 50) document.getElementById("flames").append(element("p", {},
            (data.groups.length - 50) + " more fingerprints are in the table; their flame graphs are left out."));
          document.getElementById("search").addEventListener("input", () => flameGraphs.forEach(drawFlame));
        }

        """#

    static let table = #"""
        const columns = [
          ["Fingerprint", (g) => g.fp, false], ["Culprit", (g) => frameName(g.culprit), false],
          ["Where", (g) => (frameWhere(g.culprit) || "").split("/").pop(), false], ["Callout", (g) => g.callout || "", false],
          ["Stalls", (g) => g.stalls.length, true], ["Total", (g) => g.total, true], ["p50", (g) => g.p50, true],
          ["p95", (g) => g.p95, true], ["Max", (g) => g.max, true], ["First seen", (g) => g.first, true],
          ["Last seen", (g) => g.last, true], ["Runs", (g) => g.runs, true], ["Hosts", (g) => g.hosts.length, true],
        ];
        const shown = (column, group) => {
          const value = column[1](group);
          if (column[0] === "First seen" || column[0] === "Last seen") return when(value).slice(0, 19);
          if (["Total", "p50", "p95", "Max"].includes(column[0])) return ms(value);
          if (column[0] === "Hosts") return group.hosts.join(", ");
          if (column[0] === "Stalls" && group.unfinished) return value + " (" + group.unfinished + " unfinished)";
          return String(value);
        };
        let sortColumn = 5;
        let sortAscending = false;
        function drawTable() {
          const table = document.getElementById("groups");
          const head = element("tr");
          columns.forEach((column, index) => {
            const cell = element("th", { "data-column": String(index) }, column[0]);
            if (index === sortColumn) cell.className = "sorted" + (sortAscending ? " ascending" : "");
            cell.addEventListener("click", () => {
              sortAscending = sortColumn === index ? !sortAscending : !column[2];
              sortColumn = index;
              drawTable();
            });
            head.append(cell);
          });
          table.tHead.replaceChildren(head);
          const key = columns[sortColumn][1];
          const rows = data.groups.slice().sort((a, b) => {
            const x = key(a);
            const y = key(b);
            const order = x === y ? 0 : x === null ? -1 : y === null ? 1 : x < y ? -1 : 1;
            return sortAscending ? order : -order;
          });
          const body = table.tBodies[0];
          body.replaceChildren();
          rows.forEach((group) => {
            const row = element("tr", { "data-fingerprint": group.fp });
            columns.forEach((column) => row.append(element("td", column[2] ? { class: "number" }
              : column[0] === "Where" ? { title: frameWhere(group.culprit) || "" } : {}, shown(column, group))));
            row.addEventListener("click", () => {
              const target = document.getElementById("flame-" + group.fp);
              if (target) target.scrollIntoView({ behavior: "smooth" });
            });
            body.append(row);
          });
        }
        const total = data.stalls.reduce((sum, stall) => sum + stall.dur, 0);
        const hosts = new Set(data.runs.map((run) => run.host));
        const count = (value, noun) => value + " " + noun + (value === 1 ? "" : "s");
        document.getElementById("overview").textContent = count(data.stalls.length, "stall") + " (" + ms(total)
          + " stalled) in " + count(data.runs.length, "run") + " on " + count(hosts.size, "host") + ", "
          + count(data.groups.length, "fingerprint") + ", from " + data.sources.join(", ") + " — stallwatch "
          + data.version + data.deadlocks.map((text) => "; DEADLOCK in " + text).join("");
        drawTimeline();
        drawTable();
        // A link can open the page searching for a function (#search=name) or showing a stall (#stall=index).
        const linked = new URLSearchParams(location.hash.slice(1));
        if (linked.has("search")) document.getElementById("search").value = linked.get("search");
        drawFlames();
        if (linked.has("stall") && data.stalls[Number(linked.get("stall"))]) {
          showStall(Number(linked.get("stall")), document.querySelector('.bar[data-stall="' + linked.get("stall")
            + '"]'));
        }

        """#
}
