// 课程网站的小脚本：文字稿与数字面板的每一行都能跳到视频里的那一刻；播放时标出当前一句；
// 整章视频旁的章节列表；单独播放页的 #t=秒 从那里开始；图库的全课搜索（Pagefind 的静态索引）。
// 没有脚本时，文字稿与数字都还在页面上，链接打开单独播放页。
//
// The player is one object, window.LectureKit: wire(clip) makes one clip work (a .clip element holding its
// <video>, its transcript and its numbers panel), on every page that shows clips, and on any element a script
// adds later (call LectureKit.wire on it). What else acts on a clip registers with LectureKit.addon(fn): fn(clip,
// video) runs once for every clip, already wired or wired later.
(function () {
  "use strict";

  var kit = (window.LectureKit = window.LectureKit || {});
  var addons = [];
  var wired = [];

  kit.seek = function (video, seconds) {
    var go = function () {
      video.currentTime = seconds;
    };
    if (video.readyState >= 1) go();
    else video.addEventListener("loadedmetadata", go, { once: true });
  };

  kit.play = function (video) {
    var started = video.play();
    if (started && started.catch) started.catch(function () {});
  };

  // What stands for a clip's video in the page's layout: the video, or the picture an add-on put round it (the
  // numbers in the picture: the video and its hotspots), after which anything else goes.
  kit.picture = function (video) {
    return video.closest(".picture") || video;
  };

  kit.addon = function (addon) {
    addons.push(addon);
    wired.forEach(function (clip) {
      addon(clip, clip.querySelector("video"));
    });
  };

  // One clip: its video, and links (transcript lines, a fact's first cue) that seek it: one listener on the clip,
  // so that the links of notes loaded later (kit.loadNotes) seek as well.
  kit.wire = function (clip) {
    var video = clip.querySelector("video");
    if (!video || wired.indexOf(clip) >= 0) return;
    wired.push(clip);
    var embed = document.body.classList.contains("embed");
    clip.addEventListener("click", function (event) {
      var link = event.target.closest("a.cue[data-start]");
      if (!link) return;
      event.preventDefault();
      kit.seek(video, parseFloat(link.dataset.start));
      kit.play(video);
      if (embed) history.replaceState(null, "", "#t=" + link.dataset.start);
    });
    var lines, starts, current;
    var findLines = function () {
      lines = Array.prototype.slice.call(clip.querySelectorAll(".transcript a.cue[data-start]"));
      starts = lines.map(function (a) { return parseFloat(a.dataset.start); });
      current = -1;
    };
    findLines();
    clip.addEventListener("lecture-notes", findLines);
    video.addEventListener("timeupdate", function () {
      var t = video.currentTime + 0.05, now = -1;
      for (var i = 0; i < starts.length; i++) if (starts[i] <= t) now = i;
      if (now === current) return;
      if (current >= 0) {
        lines[current].parentElement.classList.remove("current");
        lines[current].removeAttribute("aria-current");
      }
      current = now;
      if (now >= 0) {
        lines[now].parentElement.classList.add("current");
        lines[now].setAttribute("aria-current", "true");
      }
    });
    // The chapter video's list of its figures.
    var marks = Array.prototype.slice.call(clip.querySelectorAll(".chapters li"));
    var markStarts = marks.map(function (li) { return parseFloat(li.firstElementChild.dataset.start); });
    marks.forEach(function (li, i) {
      li.firstElementChild.addEventListener("click", function () {
        kit.seek(video, markStarts[i]);
        kit.play(video);
      });
    });
    if (marks.length) {
      video.addEventListener("timeupdate", function () {
        var t = video.currentTime;
        marks.forEach(function (li, i) {
          li.classList.toggle("current", t >= markStarts[i] && (i + 1 === markStarts.length || t < markStarts[i + 1]));
        });
      });
    }
    addons.forEach(function (addon) {
      addon(clip, video);
    });
  };

  // Lazy notes: a clip with data-notes="…/notes/<figures|chapters>/<id>.js" (a gallery card, a <lecture-clip>) gets
  // its record when first asked: the player's HTML with every track inline, paths from the kit's folder. Loaded as a
  // script, which the gallery opened from disk and a course site on another origin can both load, where fetch()
  // could not. kit.loadNotes(clip) resolves once the clip's transcript and numbers panel are in the page (at once
  // where they are already, as on the embed pages): a clip without a video takes the whole player; otherwise its
  // video takes the tracks it lacks and each placeholder (data-lazy) its part.
  var notesByUrl = {}; // the records asked for, by address
  kit.notesArrived = function (html) {
    var record = notesByUrl[document.currentScript && document.currentScript.src];
    if (record) record.arrived(html);
  };
  var record = function (url) {
    if (!notesByUrl[url]) {
      var script = document.createElement("script");
      var entry = (notesByUrl[url] = {});
      entry.promise = new Promise(function (resolve, reject) {
        entry.arrived = resolve;
        script.onload = function () {
          reject(new Error(url + " holds no notes"));
        };
        script.onerror = function () {
          delete notesByUrl[url];
          reject(new Error("cannot load " + url));
        };
      });
      script.src = url;
      document.head.appendChild(script);
    }
    return notesByUrl[url].promise;
  };
  // The record's paths start at the kit's folder (two up from the record): made whole, so they hold in any page.
  var rebase = function (part, root) {
    part.querySelectorAll("[src], [poster], [href]").forEach(function (element) {
      ["src", "poster", "href"].forEach(function (name) {
        var value = element.getAttribute(name);
        if (value && value[0] !== "#" && !/^[a-z][a-z0-9+.-]*:/i.test(value)) {
          element.setAttribute(name, new URL(value, root).href);
        }
      });
    });
  };
  kit.loadNotes = function (clip) {
    if (!clip.dataset.notes) return Promise.resolve(clip);
    if (!clip.notesLoaded) {
      var url = new URL(clip.dataset.notes, document.baseURI).href;
      clip.notesLoaded = record(url).then(function (html) {
        var part = document.createElement("template");
        part.innerHTML = html;
        rebase(part.content, new URL("../../", url));
        var video = clip.querySelector("video");
        if (!video) {
          clip.appendChild(part.content);
        } else {
          if (!video.querySelector("track")) {
            part.content.querySelectorAll("video > track").forEach(function (track) {
              video.appendChild(track);
            });
          }
          clip.querySelectorAll("[data-lazy]").forEach(function (slot) {
            var found = part.content.querySelector("." + slot.dataset.lazy);
            if (!found) return;
            found.open = slot.open;
            slot.replaceWith(found);
          });
        }
        clip.dispatchEvent(new CustomEvent("lecture-notes"));
        return clip;
      });
      clip.notesLoaded.catch(function () {
        clip.notesLoaded = null; // asked again, it tries again
      });
    }
    return clip.notesLoaded;
  };
  // A gallery card loads them when its clip first plays (its captions are in them) or a placeholder is opened.
  kit.addon(function (clip, video) {
    if (!clip.querySelector("[data-lazy]")) return;
    var load = function () {
      kit.loadNotes(clip).catch(function () {});
    };
    video.addEventListener("play", load);
    clip.addEventListener("toggle", function (event) {
      if (event.target.open && event.target.dataset.lazy) load();
    }, true);
  });

  // -- The numbers in the picture -------------------------------------------------------------------------------
  // A transparent hotspot over each number the video draws, while it is drawn: a click, or Enter on it, pauses the
  // clip and opens that number in its figure's numbers panel. Where and when comes from the clip's metadata track
  // (<figure>.facts.vtt, a chapter video's too): one cue per stretch of time a number stays in one box, its text
  // JSON {figure, fact, box: [left, top, right, bottom] as fractions of the frame, name}. The track is fetched when
  // the clip first plays, seeks or is pointed at; a gallery card's comes with its notes. Tab goes through the
  // numbers on screen in reading order. Nothing is drawn over the video but a faint outline on the hotspot pointed at
  // or focused.
  var TARGET = 24; // px: a hotspot is at least this wide and high, centred on its number

  var openFact = function (clip, data) {
    var card = clip.getRootNode().querySelector('.clip[data-figure="' + data.figure + '"]');
    if (!card) return;
    kit.loadNotes(card).then(function () {
      var entry = card.querySelector('.fact[data-fact="' + data.fact + '"]');
      if (!entry) return;
      entry.closest("details").open = true;
      card.getRootNode().querySelectorAll(".fact.picked").forEach(function (old) { old.classList.remove("picked"); });
      entry.classList.add("picked");
      entry.tabIndex = -1;
      entry.scrollIntoView({ block: "center" });
      entry.focus({ preventScroll: true });
    });
  };

  kit.addon(function (clip, video) {
    var picture, layer, source, spots = [];
    // The picture in the element (object-fit: contain may leave bars), then each hotspot on its box.
    var place = function () {
      var w = video.clientWidth, h = video.clientHeight, vw = video.videoWidth || w, vh = video.videoHeight || h;
      var scale = Math.min(w / vw, h / vh), pw = vw * scale, ph = vh * scale, px = function (n) { return n + "px"; };
      Object.assign(layer.style, { left: px((w - pw) / 2), top: px((h - ph) / 2), width: px(pw), height: px(ph) });
      spots.forEach(function (spot) {
        var box = spot.data.box, bw = (box[2] - box[0]) * pw, bh = (box[3] - box[1]) * ph;
        var sw = Math.max(bw, TARGET), sh = Math.max(bh, TARGET);
        Object.assign(spot.button.style, {
          left: px(box[0] * pw - (sw - bw) / 2), top: px(box[1] * ph - (sh - bh) / 2), width: px(sw), height: px(sh),
        });
      });
    };
    var show = function () {
      var active = Array.prototype.slice.call(source.track.activeCues || []), kept = [];
      spots.forEach(function (spot) {
        if (active.indexOf(spot.cue) >= 0) kept.push(spot);
        else spot.button.remove();
      });
      active.forEach(function (cue) {
        if (kept.some(function (spot) { return spot.cue === cue; })) return;
        var data, button = document.createElement("button");
        try { data = JSON.parse(cue.text); } catch (e) { return; }
        button.type = "button";
        button.className = "hotspot";
        button.setAttribute("aria-label", data.name);
        button.addEventListener("click", function (event) {
          event.stopPropagation();
          video.pause();
          openFact(clip, data);
        });
        kept.push({ cue: cue, data: data, button: button });
      });
      // Reading order: by rows (tops within 2% of the frame), each left to right.
      spots = kept.sort(function (a, b) {
        var dy = a.data.box[1] - b.data.box[1];
        return Math.abs(dy) > 0.02 ? dy : a.data.box[0] - b.data.box[0];
      });
      spots.forEach(function (spot, i) { // a button already in its place stays, and keeps its focus
        if (layer.children[i] !== spot.button) layer.insertBefore(spot.button, layer.children[i] || null);
      });
      place();
    };
    var start = function () {
      source = source || video.querySelector('track[kind="metadata"]');
      if (!source || picture) return;
      picture = document.createElement("div");
      layer = document.createElement("div");
      picture.className = "picture";
      layer.className = "hotspots";
      video.parentNode.insertBefore(picture, video);
      picture.append(video, layer);
      var load = function () {
        if (source.track.mode === "disabled") source.track.mode = "hidden";
      };
      ["play", "seeking", "pointerenter", "focus"].forEach(function (name) { video.addEventListener(name, load); });
      if (!video.paused) load();
      source.track.addEventListener("cuechange", show);
      source.addEventListener("load", show);
      video.addEventListener("loadedmetadata", place);
      if (window.ResizeObserver) new ResizeObserver(place).observe(video);
      // Full screen: the picture goes full screen rather than the bare video, so its hotspots go with it.
      document.addEventListener("fullscreenchange", function () {
        if (document.fullscreenElement === video) picture.requestFullscreen().catch(function () {});
        place();
      });
    };
    start();
    clip.addEventListener("lecture-notes", start); // a gallery card's tracks come with its notes
  });

  document.querySelectorAll(".clip").forEach(kit.wire);

  // The embed page: #t=SECONDS starts the clip there (beside other settings: #t=12&cc=0).
  if (document.body.classList.contains("embed")) {
    var fromHash = function () {
      var found = /(?:^#|&)t=(\d+(?:\.\d+)?)(?:&|$)/.exec(location.hash);
      var video = document.querySelector("video");
      if (found && video) kit.seek(video, parseFloat(found[1]));
    };
    fromHash();
    window.addEventListener("hashchange", fromHash);
  }

  // -- captions and descriptions: the track menu ---------------------------------------------------------------
  // Under every clip, a menu of its text tracks: its captions (kind captions or subtitles), its descriptions (kind
  // descriptions: what the picture shows that the voice does not say) and 关 (none). Captions show on the video.
  // A browser draws no descriptions track, so the chosen one's current line is written into a live region under
  // the video, which a screen reader reads out as it changes. The captions are on at first; on an embed page,
  // cc=0 in the address (#cc=0, #t=12&cc=0) starts them off, and cc=1 turns them on again. A clip whose tracks
  // come later (a gallery card's, with its notes) gets its menu when they arrive.
  var TRACK_KINDS = { captions: "字幕", subtitles: "字幕", descriptions: "画面描述" };
  var captionsWanted = function () {
    return !/(?:^#|&)cc=0(?:&|$)/.test(location.hash);
  };
  var tracksMenus = 0;
  var trackMenu = function (video) {
    var tracks = Array.prototype.filter.call(video.textTracks, function (track) {
      return Object.prototype.hasOwnProperty.call(TRACK_KINDS, track.kind);
    });
    if (!tracks.length) return null;
    var id = "tracks-" + ++tracksMenus;
    var bar = document.createElement("div");
    bar.className = "tracks";
    var label = document.createElement("label");
    label.htmlFor = id;
    label.textContent = "字幕与画面描述";
    var menu = document.createElement("select");
    menu.id = id;
    menu.appendChild(new Option("关", "-1"));
    tracks.forEach(function (track, i) {
      menu.appendChild(new Option(TRACK_KINDS[track.kind] + "：" + (track.label || track.language), String(i)));
    });
    var said = document.createElement("p");
    said.className = "described";
    said.setAttribute("aria-live", "polite");
    said.hidden = true;
    bar.appendChild(label);
    bar.appendChild(menu);
    bar.appendChild(said);
    var chosen = null;
    var describe = function () {
      if (!chosen || chosen.kind !== "descriptions") return;
      var lines = Array.prototype.map.call(chosen.activeCues || [], function (cue) { return cue.text; });
      said.textContent = lines.join(" ");
    };
    tracks.forEach(function (track) {
      track.addEventListener("cuechange", describe);
    });
    var choose = function (index) {
      chosen = tracks[index] || null;
      tracks.forEach(function (track) {
        if (track !== chosen) track.mode = "disabled";
      });
      said.textContent = "";
      said.hidden = !chosen || chosen.kind !== "descriptions";
      if (chosen) chosen.mode = chosen.kind === "descriptions" ? "hidden" : "showing";
      menu.value = String(chosen ? index : -1);
      describe();
    };
    var firstCaptions = function () {
      for (var i = 0; i < tracks.length; i++) if (tracks[i].kind !== "descriptions") return i;
      return -1;
    };
    var embed = document.body.classList.contains("embed");
    choose(embed && !captionsWanted() ? -1 : firstCaptions());
    menu.addEventListener("change", function () {
      choose(parseInt(menu.value, 10));
    });
    bar.followHash = function () {
      if (embed) choose(captionsWanted() ? firstCaptions() : -1);
    };
    return bar;
  };
  kit.addon(function (clip, video) {
    var bar = null;
    var place = function () {
      var made = trackMenu(video);
      if (!made) return;
      if (bar) bar.replaceWith(made);
      else kit.picture(video).insertAdjacentElement("afterend", made);
      bar = made;
    };
    place();
    var waiting = false; // tracks added together (a card's notes) make one new menu
    video.textTracks.addEventListener("addtrack", function () {
      if (waiting) return;
      waiting = true;
      setTimeout(function () {
        waiting = false;
        place();
      }, 0);
    });
    var wanted = captionsWanted();
    window.addEventListener("hashchange", function () {
      if (captionsWanted() === wanted) return; // another setting changed (#t=), not cc
      wanted = captionsWanted();
      if (bar) bar.followHash();
    });
  });

  // The gallery's search: a static Pagefind index (pagefind/), loaded on the first keystroke.
  var box = document.body.classList.contains("gallery") && document.getElementById("search-box");
  if (box) {
    var status = document.querySelector(".search-status");
    var list = document.querySelector(".search-results");
    var engine = null, records = null, asked = 0;
    var load = function () {
      if (!engine) {
        // Each record is a page n.html of the index; records.json gives the page and second it opens and
        // its text as written.
        engine = fetch("./pagefind/records.json").then(function (answer) { return answer.json(); })
          .then(function (found) {
            records = found;
            return import("./pagefind/pagefind.js");
          }).then(function (pagefind) {
            return pagefind.init().then(function () { return pagefind; });
          });
      }
      return engine;
    };
    // The record's text with each place the query is, marked (built as text nodes: nothing is parsed as HTML).
    var marked = function (text, query) {
      var line = document.createElement("div"), lower = text.toLowerCase(), wanted = query.toLowerCase();
      var at = 0, next;
      line.className = "meta";
      while (wanted && (next = lower.indexOf(wanted, at)) >= 0) {
        line.appendChild(document.createTextNode(text.slice(at, next)));
        var mark = document.createElement("mark");
        mark.textContent = text.slice(next, next + wanted.length);
        line.appendChild(mark);
        at = next + wanted.length;
      }
      line.appendChild(document.createTextNode(text.slice(at)));
      return line;
    };
    var show = function (query, found) {
      list.textContent = "";
      status.textContent = query ? "「" + query + "」：" + found.length + " 处" : "";
      found.forEach(function (hit) {
        var record = hit.record;
        var at = /#t=(\d+)/.exec(record.page);
        var item = document.createElement("li");
        var link = document.createElement("a");
        link.href = record.page;
        link.className = "hit";
        var where = document.createElement("span");
        where.className = "at";
        where.textContent = at ? Math.floor(at[1] / 60) + ":" + ("0" + (at[1] % 60)).slice(-2) : "数字";
        link.appendChild(where);
        link.appendChild(document.createTextNode(hit.meta.title));
        item.appendChild(link);
        item.appendChild(marked(record.text, query));
        list.appendChild(item);
      });
    };
    var run = function () {
      var query = box.value.trim(), ticket = ++asked;
      if (!query) return show("", []);
      load().then(function (pagefind) {
        return pagefind.search(query);
      }).then(function (search) {
        return Promise.all(search.results.slice(0, 40).map(function (r) { return r.data(); }));
      }).then(function (found) {
        found.forEach(function (hit) { hit.record = records[parseInt(/(\d+)(?:\.html)?\/?$/.exec(hit.url)[1], 10)]; });
        // Pagefind may find more than the query as typed (each word of it): where some hits hold it as
        // typed, only those are shown.
        var wanted = query.toLowerCase();
        var literal = found.filter(function (hit) { return hit.record.text.toLowerCase().indexOf(wanted) >= 0; });
        if (literal.length) found = literal;
        if (ticket === asked) show(query, found.slice(0, 20));
      }).catch(function () {
        status.textContent = "搜索索引打不开：请用 lecture serve 或任何静态网站服务器打开本页，不要直接打开文件。";
      });
    };
    var timer = null;
    box.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(run, 150);
    });
  }
})();
