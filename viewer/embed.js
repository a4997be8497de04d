// Fitness Report embedding: put
//   <script src="https://site.example/embed.js" data-fitness="board|run|replay"
//           data-src="https://site.example/?run=<id>&view=replay"></script>
// on any page. The viewer mounts into a new element just after the script tag
// (or into the element named by data-target), fetching from the site that
// serves this script. data-src is a viewer URL on that site: its query says
// what to show (?run=<id>, &view=replay, ?trace=URL1;URL2, &event=<n>, &corr=<id>);
// for a board it may be left out.
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script) {
    return;
  }
  var base = new URL("./", script.src);
  // The viewer's module must not mount itself on the host page's body.
  window.__fitnessEmbed = true;
  if (!window.__fitnessEmbedModule) {
    window.__fitnessEmbedModule = fetch(new URL("index.html", base).href)
      .then(function (r) {
        if (!r.ok) {
          throw new Error("cannot read " + r.url + ": HTTP " + r.status);
        }
        return r.text();
      })
      .then(function (html) {
        // The page starts the viewer after its first paint: `import('x.js')`
        // and `fetch('x_bg.wasm')` (Trunk's own shell says `from 'x.js'`).
        var js = html.match(/(?:from\s+|import\(\s*)['"]([^'"]+\.js)['"]/);
        var wasm = html.match(/['"]([^'"\s]+\.wasm)['"]/);
        var css = html.match(/href=['"]([^'"]+\.css)['"]/);
        if (css && !document.querySelector("link[data-fitness-style]")) {
          var link = document.createElement("link");
          link.rel = "stylesheet";
          link.href = new URL(css[1], base).href;
          link.setAttribute("data-fitness-style", "1");
          document.head.appendChild(link);
        }
        if (!js || !wasm) {
          throw new Error("the site's index.html names no viewer module");
        }
        return import(new URL(js[1], base).href).then(function (mod) {
          return mod.default({ module_or_path: new URL(wasm[1], base).href }).then(function () {
            return mod;
          });
        });
      });
  }
  var kind = script.getAttribute("data-fitness") || "board";
  var src = new URL(script.getAttribute("data-src") || "./", base).href;
  var target = script.getAttribute("data-target");
  var el = target ? document.querySelector(target) : null;
  if (!el) {
    el = document.createElement("div");
    script.parentNode.insertBefore(el, script.nextSibling);
  }
  el.className = (el.className ? el.className + " " : "") + "fitness-embed-host";
  el.setAttribute("data-fitness-kind", kind);
  window.__fitnessEmbedModule
    .then(function (mod) {
      mod.mount_embed(el, kind, src);
    })
    .catch(function (err) {
      el.textContent = "The Fitness Report viewer could not load: " + err;
      el.setAttribute("data-fitness-error", "1");
    });
})();
