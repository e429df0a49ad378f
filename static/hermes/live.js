/* Live run and visit pages (SPEC §8): no build step, no dependency.
 *
 * The page marks itself live with an element carrying data-live-url (a JSON
 * view), data-live-seconds and data-live-fingerprint. Every few seconds, while
 * the tab is visible, this asks the JSON view for the fingerprint of what the
 * page shows; when it differs, it fetches the page again and swaps in each
 * element marked data-live-region (by id), leaving forms and scrolling alone.
 * When the run or visit has ended it swaps one last time and stops. "… ago"
 * texts (span.ago[data-since]) are kept current in the page's language.
 * Without JavaScript a <noscript> refresh reloads the whole page instead.
 */
(function () {
  "use strict";
  var state = document.querySelector("[data-live-url]");
  if (!state || !window.fetch || !window.DOMParser) {
    return;
  }
  var url = state.getAttribute("data-live-url");
  var every = (parseInt(state.getAttribute("data-live-seconds"), 10) || 5) * 1000;
  var fingerprint = state.getAttribute("data-live-fingerprint");
  var language = document.documentElement.lang || "en";
  var relative = window.Intl && Intl.RelativeTimeFormat ? new Intl.RelativeTimeFormat(language, { numeric: "auto" }) : null;
  var skew = 0; // server clock minus this clock, in milliseconds

  function ages() {
    if (!relative) {
      return;
    }
    var now = Date.now() + skew;
    document.querySelectorAll("span.ago[data-since]").forEach(function (span) {
      var seconds = Math.max(0, Math.round((now - Date.parse(span.getAttribute("data-since"))) / 1000));
      var text;
      if (seconds < 60) {
        text = relative.format(-seconds, "second");
      } else if (seconds < 3600) {
        text = relative.format(-Math.floor(seconds / 60), "minute");
      } else {
        text = relative.format(-Math.floor(seconds / 3600), "hour");
      }
      span.textContent = text;
    });
  }

  function swap() {
    return fetch(window.location.href, { credentials: "same-origin", cache: "no-store" })
      .then(function (response) {
        if (!response.ok) {
          throw new Error("page " + response.status);
        }
        return response.text();
      })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html");
        document.querySelectorAll("[data-live-region]").forEach(function (region) {
          var replacement = region.id && fresh.getElementById(region.id);
          if (replacement) {
            region.replaceWith(document.importNode(replacement, true));
          }
        });
        ages();
      });
  }

  function stop() {
    state.classList.add("stopped");
    state.textContent = state.getAttribute("data-stopped-text") || "";
  }

  function schedule() {
    window.setTimeout(poll, every);
  }

  function poll() {
    if (document.hidden) {
      schedule();
      return;
    }
    fetch(url, { credentials: "same-origin", cache: "no-store", headers: { Accept: "application/json" } })
      .then(function (response) {
        if (!response.ok) {
          throw new Error("live " + response.status);
        }
        return response.json();
      })
      .then(function (body) {
        var data = body.data;
        skew = Date.parse(data.now) - Date.now();
        var changed = data.fingerprint !== fingerprint;
        fingerprint = data.fingerprint;
        var done = changed ? swap() : Promise.resolve(ages());
        return done.then(function () {
          if (data.live) {
            schedule();
          } else {
            stop();
          }
        });
      })
      .catch(function () {
        schedule(); // a restart or a dropped connection: try again later
      });
  }

  schedule();
})();
