// <lecture-clip figure="backprop/gates_circuit" start="12" duration="83.4"><a href="…/embed/gates_circuit.html#t=12">标题</a></lecture-clip>
// 课程网站上的一个视频：播放前只是海报、标题、时长和播放键（除海报外什么都不取）；一按播放，才载入播放器、字幕、
// 文字稿和数字面板，就在页面里原处展开。没有脚本时，显示元素里的链接：单独播放页，从那一秒开始。
//
// Before play, a facade: the poster, the title (the fallback link's text), the duration and a play button; nothing
// else is fetched. On play it loads the kit's player (kit.js, kit.css) and the figure's record (notes/figures/<id>.js:
// the embed page's player, every track inline), puts it in its shadow root, wires it (LectureKit.wire, so every
// add-on works in it) and plays from `start`. The kit's address: the `kit` attribute, else <meta name="lecture-kit">,
// else the folder this script came from. Shadow DOM, so that the course site's styles (a theme's rules for details,
// lists, links) do not reach into the player and kit.css's do not reach out.
(function () {
  "use strict";

  var here = document.currentScript ? document.currentScript.src : document.baseURI;
  // The poster with the play button on it, the title and duration in a bar below (the poster has a title of its own
  // drawn at its top, which a title laid over it would cover).
  var CSS =
    ":host{display:block;margin:1em 0}" +
    "button{all:unset;box-sizing:border-box;display:block;width:100%;background:#0e1116;border-radius:6px;" +
    "overflow:hidden;cursor:pointer;color:#e8e6e3;font:inherit;line-height:1.5}" +
    "button:focus-visible{outline:3px solid #58c4dd;outline-offset:2px}" +
    ".frame{position:relative;display:block;aspect-ratio:16/9}" +
    "img{display:block;width:100%;height:100%;object-fit:contain}" +
    ".bar{display:flex;gap:1em;justify-content:space-between;padding:.5em .9em}" +
    ".time{color:#8b949e;font-variant-numeric:tabular-nums}" +
    ".icon{position:absolute;left:50%;top:50%;width:68px;height:48px;margin:-24px 0 0 -34px;border-radius:12px;" +
    "background:#000b}" +
    ".icon::after{content:'';position:absolute;left:27px;top:14px;border:10px solid transparent;border-right:0;" +
    "border-left:17px solid #fff}" +
    "button:hover .icon,button:focus-visible .icon{background:#1f7a8c}" +
    "button[aria-busy=true] .icon{opacity:.4}";
  var pending = {};

  var clock = function (seconds) {
    var whole = Math.floor(seconds);
    return Math.floor(whole / 60) + ":" + ("0" + (whole % 60)).slice(-2);
  };

  // An element that loads (a script or a stylesheet), as a promise.
  var loaded = function (element) {
    return new Promise(function (resolve, reject) {
      element.onload = resolve;
      element.onerror = function () {
        reject(new Error("cannot load " + (element.src || element.href)));
      };
    });
  };

  // The kit's player, once per page (a page of the kit has it already).
  var player = function (base) {
    if (window.LectureKit && window.LectureKit.loadNotes) return Promise.resolve(window.LectureKit);
    if (!pending[base]) {
      var script = document.createElement("script");
      script.src = base + "kit.js";
      pending[base] = loaded(script).then(
        function () {
          return window.LectureKit;
        },
        function (error) {
          delete pending[base]; // the next press tries again
          script.remove();
          throw error;
        }
      );
      document.head.appendChild(script);
    }
    return pending[base];
  };

  customElements.define(
    "lecture-clip",
    class extends HTMLElement {
      connectedCallback() {
        if (this.shadowRoot) return;
        // Loaded in the head without defer (Sphinx's html_js_files), the element is connected before the parser has
        // read its fallback link, where its title is: wait for the page.
        if (document.readyState === "loading") {
          document.addEventListener("DOMContentLoaded", this.connectedCallback.bind(this), { once: true });
          return;
        }
        var meta = document.querySelector('meta[name="lecture-kit"]');
        var told = this.getAttribute("kit") || (meta && meta.content);
        var figure = this.getAttribute("figure") || "";
        var link = this.querySelector("a");
        var seconds = parseFloat(this.getAttribute("duration"));
        this.base = told ? new URL(told, document.baseURI).href : new URL(".", here).href;
        this.figure = figure;
        this.start = parseFloat(this.getAttribute("start")) || 0;
        this.label = ((link && link.textContent) || figure).trim();
        var root = this.attachShadow({ mode: "open" });
        root.innerHTML =
          "<style>" + CSS + "</style><button type=button><span class=frame><img alt='' decoding=async loading=lazy>" +
          "<span class=icon></span></span><span class=bar><span class=title></span><span class=time></span></span></button>";
        var button = root.querySelector("button");
        var time = isFinite(seconds) ? clock(seconds) : "";
        root.querySelector(".title").textContent = this.label;
        root.querySelector(".time").textContent = time;
        if (!time) root.querySelector(".time").remove();
        button.setAttribute("aria-label", "播放：" + this.label + (time ? "（时长 " + time + "）" : ""));
        // The 480-px thumbnail, unless the facade is drawn much wider: then the full poster.
        var wide = this.getBoundingClientRect().width * (window.devicePixelRatio || 1) > 960;
        root.querySelector("img").src = this.base + "media/" + figure + (wide ? ".png" : ".webp");
        button.addEventListener("click", this.play.bind(this));
      }

      play() {
        var root = this.shadowRoot, button = root.querySelector("button");
        if (button.getAttribute("aria-busy")) return;
        button.setAttribute("aria-busy", "true");
        var base = this.base, start = this.start;
        var clip = document.createElement("div");
        clip.className = "clip";
        clip.dataset.figure = this.figure.split("/").pop();
        clip.dataset.notes = base + "notes/figures/" + clip.dataset.figure + ".js";
        var css = document.createElement("link");
        css.rel = "stylesheet";
        css.href = base + "kit.css";
        root.appendChild(css);
        Promise.all([
          loaded(css),
          player(base).then(function (kit) {
            return kit.loadNotes(clip);
          }),
        ]).then(
          function () {
            button.replaceWith(clip);
            var kit = window.LectureKit, video = clip.querySelector("video");
            kit.wire(clip);
            kit.seek(video, start);
            kit.play(video);
            video.focus();
          },
          function () {
            css.remove();
            button.removeAttribute("aria-busy");
            root.querySelector(".title").textContent = "载入失败，再按一次重试：" + button.getAttribute("aria-label");
          }
        );
      }
    }
  );
})();
