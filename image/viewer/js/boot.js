// Starts the page (js/main.js and every module it imports), and starts it
// again when one of those files did not arrive. Chromium drops every
// request in flight when the machine's network changes
// (ERR_NETWORK_CHANGED: Docker adding or removing a container's interface
// is enough), a module graph that lost one file never runs, and the browser
// remembers the failure, so only a reload fetches the files again. A
// classic deferred script: it runs once the page is parsed, and it can see
// the module fail.
(() => {
  const TRIES = 'computer-use.viewer-boot-tries';
  const MAX_TRIES = 5;
  const main = document.createElement('script');
  main.type = 'module';
  main.src = 'js/main.js';
  main.addEventListener('load', () => sessionStorage.removeItem(TRIES));
  main.addEventListener('error', () => {
    const tries = Number(sessionStorage.getItem(TRIES) || 0) + 1;
    if (tries >= MAX_TRIES) {
      sessionStorage.removeItem(TRIES);
      const status = document.getElementById('list-status');
      status.textContent = `The page's files did not load ${MAX_TRIES} times; reload the page.`;
      status.classList.add('error');
      return;
    }
    sessionStorage.setItem(TRIES, String(tries));
    setTimeout(() => location.reload(), 500 * tries);
  });
  document.head.appendChild(main);
})();
