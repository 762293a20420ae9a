package web_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// Browser tests drive Debian's Chromium through chromedp
// (docs/design.md "Dependencies"); they never download a browser. One browser process is
// shared by the package's tests; each test gets its own tab, no cookies
// and a deadline.

var updateScreenshots = flag.Bool("update-screenshots", false, "write docs/screenshots/*.png from the browser tests")

var browser struct {
	once   sync.Once
	ctx    context.Context // the browser, started on first use
	cancel func()
	err    error
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if browser.cancel != nil {
		browser.cancel()
	}
	os.Exit(code)
}

// tab returns a fresh browser context and tab with a 20 s deadline, or
// skips the test when CARDEX_TEST_CHROMIUM is unset (and fails it when
// CI=true, where the browser tests must run).
func tab(t *testing.T) context.Context {
	t.Helper()
	exe := os.Getenv("CARDEX_TEST_CHROMIUM")
	if exe == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CARDEX_TEST_CHROMIUM is not set, and CI=true requires the browser tests")
		}
		t.Skip("CARDEX_TEST_CHROMIUM is not set: skipping the browser tests")
	}
	browser.once.Do(func() {
		dir, err := os.MkdirTemp("", "cardex-chromium-")
		if err != nil {
			browser.err = err
			return
		}
		opts := []chromedp.ExecAllocatorOption{
			chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.Headless, chromedp.DisableGPU, chromedp.NoFirstRun,
			chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(dir), chromedp.WindowSize(1280, 800),
			chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true),
			chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("hide-scrollbars", true),
		}
		actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
		bctx, bcancel := chromedp.NewContext(actx)
		if err := chromedp.Run(bctx); err != nil {
			browser.err = err
		}
		browser.ctx = bctx
		browser.cancel = func() { bcancel(); acancel(); os.RemoveAll(dir) }
	})
	if browser.err != nil {
		t.Fatalf("start chromium: %v", browser.err)
	}
	ctx, cancel := chromedp.NewContext(browser.ctx)
	ctx, cancelT := context.WithTimeout(ctx, 20*time.Second)
	t.Cleanup(func() { cancelT(); cancel() })
	// The dialog hook is installed before any page script runs: card text
	// that became script would call alert/confirm/prompt (docs/threats.md
	// H.73), and the test reads window.__dialogs afterwards.
	err := chromedp.Run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		// Tests run one at a time in one browser: start each without the
		// previous test's cookies (an admin session among them).
		if err := network.ClearBrowserCookies().Do(ctx); err != nil {
			return err
		}
		_, err := page.AddScriptToEvaluateOnNewDocument(dialogHook).Do(ctx)
		return err
	}))
	if err != nil {
		t.Fatalf("install dialog hook: %v", err)
	}
	return ctx
}

const dialogHook = `(() => {
  const calls = [];
  Object.defineProperty(window, "__dialogs", { value: calls });
  for (const f of ["alert", "confirm", "prompt", "print"]) {
    window[f] = function (...args) { calls.push(f + ":" + args.join(",")); };
  }
})();`

func run(t *testing.T, ctx context.Context, actions ...chromedp.Action) {
	t.Helper()
	if err := chromedp.Run(ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

// screenshot writes docs/screenshots/name at 1280×800 and, beside it,
// name-390.png at 390×844 (a phone) when asked to (-update-screenshots or
// CARDEX_UPDATE_SCREENSHOTS=1), so CI never dirties the tree. The viewport
// is left at 1280 px.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if !*updateScreenshots && os.Getenv("CARDEX_UPDATE_SCREENSHOTS") != "1" {
		return
	}
	for _, size := range []struct {
		w, h int64
		file string
	}{{390, 844, strings.TrimSuffix(name, ".png") + "-390.png"}, {1280, 800, name}} {
		var png []byte
		run(t, ctx, chromedp.EmulateViewport(size.w, size.h), chromedp.CaptureScreenshot(&png))
		if err := os.WriteFile(filepath.Join("..", "docs", "screenshots", size.file), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// overflowAt loads url at width w and returns how many CSS pixels the page
// is wider than the viewport (0 when nothing scrolls sideways).
func overflowAt(t *testing.T, ctx context.Context, url string, w int64) int {
	t.Helper()
	var over int
	run(t, ctx, chromedp.EmulateViewport(w, 844), chromedp.Navigate(url), chromedp.WaitReady("main", chromedp.ByQuery),
		chromedp.Evaluate(`document.documentElement.scrollWidth - window.innerWidth`, &over),
		chromedp.EmulateViewport(1280, 800))
	return over
}
