// Keyboard navigation between an episode's steps: j / ArrowDown / ArrowRight next, k / ArrowUp / ArrowLeft previous.
(function () {
  const steps = Array.from(document.querySelectorAll(".step"));
  if (!steps.length) return;
  let current = Math.max(0, steps.findIndex((s) => "#" + s.id === location.hash));
  function show(i, scroll) {
    current = Math.min(Math.max(i, 0), steps.length - 1);
    steps.forEach((s, j) => s.classList.toggle("current", j === current));
    document.body.dataset.currentStep = String(current);
    history.replaceState(null, "", "#" + steps[current].id);
    if (scroll) steps[current].scrollIntoView({ block: "start" });
  }
  document.addEventListener("keydown", (ev) => {
    if (ev.target.closest && ev.target.closest("input, textarea, select")) return;
    if (["j", "ArrowDown", "ArrowRight"].includes(ev.key)) { show(current + 1, true); ev.preventDefault(); }
    if (["k", "ArrowUp", "ArrowLeft"].includes(ev.key)) { show(current - 1, true); ev.preventDefault(); }
  });
  show(current, location.hash !== "");
})();
