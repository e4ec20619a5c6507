// Episode page: j / ArrowDown / ArrowRight next step, k / ArrowUp / ArrowLeft previous step,
// [ / ] previous / next episode of the listing; the filmstrip selects a step; UI trees load on open.
(function () {
  const steps = Array.from(document.querySelectorAll("section.step"));
  const thumbs = Array.from(document.querySelectorAll("#filmstrip .thumb"));
  if (!steps.length) return;
  // the hash is #step=N (N: the step index), so the browser
  // never scrolls to an anchor; #step-N links of older pages still work
  const wanted = /^#step[=-](\d+)$/.exec(location.hash);
  let current = wanted ? Math.max(0, steps.findIndex((s) => s.dataset.step === wanted[1])) : 0;
  function show(i) {
    current = Math.min(Math.max(i, 0), steps.length - 1);
    steps.forEach((s, j) => s.classList.toggle("current", j === current));
    thumbs.forEach((t, j) => t.classList.toggle("current", j === current));
    document.body.dataset.currentStep = String(current);
    history.replaceState(null, "", "#step=" + steps[current].dataset.step);
    if (thumbs[current]) thumbs[current].scrollIntoView({ block: "nearest", inline: "center" });
    fit();
  }
  function fit() {  // the big screenshot fills the window below what is above it (its caption stays in view)
    const figure = steps[current].querySelector(".frames figure");
    const img = figure && figure.querySelector("img");
    if (!img) return;
    const caption = figure.querySelector("figcaption");
    const above = img.getBoundingClientRect().top + window.scrollY + (caption ? caption.offsetHeight : 0) + 8;
    document.documentElement.style.setProperty("--above-step", Math.round(above) + "px");
  }
  function go(id) {
    const link = document.getElementById(id);
    if (link) location.href = link.href.split("#")[0];
  }
  document.addEventListener("keydown", (ev) => {
    if (ev.altKey || ev.ctrlKey || ev.metaKey) return;
    if (ev.target.closest && ev.target.closest("input, textarea, select")) return;
    if (["j", "ArrowDown", "ArrowRight"].includes(ev.key)) { show(current + 1); ev.preventDefault(); }
    else if (["k", "ArrowUp", "ArrowLeft"].includes(ev.key)) { show(current - 1); ev.preventDefault(); }
    else if (ev.key === "[") { go("prev-episode"); ev.preventDefault(); }
    else if (ev.key === "]") { go("next-episode"); ev.preventDefault(); }
  });
  thumbs.forEach((t, j) => t.addEventListener("click", (ev) => { show(j); ev.preventDefault(); }));

  function node(n, target) {
    const label = [n.class_name.split(".").pop(), n.resource_id && "#" + n.resource_id.split("/").pop(),
                   n.text && "“" + n.text + "”", n.content_desc && "(" + n.content_desc + ")",
                   "[" + n.bounds.join(",") + "]"].filter(Boolean).join(" ");
    const el = document.createElement("details");
    el.open = n.depth < 2;
    el.className = "node" + (n.index === target ? " target" : "") + (n.clickable ? " clickable" : "");
    el.dataset.index = String(n.index);
    const summary = document.createElement("summary");
    summary.textContent = label;
    el.appendChild(summary);
    return el;
  }
  async function loadTree(box) {
    const body = box.querySelector(".tree-body");
    const reply = await fetch(box.dataset.url, { credentials: "same-origin" });
    if (!reply.ok) { body.textContent = "UI tree unavailable (" + reply.status + ")"; return; }
    const tree = await reply.json();
    const made = {};
    body.textContent = "";
    body.classList.remove("muted");
    for (const n of tree.nodes) {
      const el = node(n, tree.target);
      made[n.index] = el;
      (n.parent === null || !made[n.parent] ? body : made[n.parent]).appendChild(el);
    }
    if (tree.target !== null && made[tree.target]) {
      for (let p = made[tree.target]; p && p !== body; p = p.parentElement) if (p.tagName === "DETAILS") p.open = true;
    }
    box.dataset.loaded = "1";
  }
  document.querySelectorAll("details.tree").forEach((box) => box.addEventListener("toggle", () => {
    if (box.open && !box.dataset.loaded) loadTree(box);
  }));
  show(current);
  window.addEventListener("resize", fit);
  if (location.hash.startsWith("#step-")) window.addEventListener("load", () => window.scrollTo(0, 0));
})();
