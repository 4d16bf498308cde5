package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/localtable/localtable/server"
)

// serverProc is a table server running as a child process, so that its
// CPU time and RSS are read from /proc the same way for each.
type serverProc struct {
	name     string
	version  string
	cmd      *exec.Cmd
	endpoint string // http://host:port/devstoreaccount1
	startup  time.Duration
	done     chan struct{}
	errOut   *tailBuffer
}

// pid is the server's process ID.
func (s *serverProc) pid() int { return s.cmd.Process.Pid }

// connString is the connection string of the emulator account.
func (s *serverProc) connString() string {
	return server.ConnectionString(s.endpoint, server.DevAccountName, server.DevAccountKey)
}

// stop ends the server with SIGTERM (SIGKILL after ten seconds).
func (s *serverProc) stop() {
	select {
	case <-s.done:
		return
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
}

// tailBuffer keeps the last 4 KiB written to it: a server's stderr, shown
// when it fails.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 4096 {
		t.buf = t.buf[len(t.buf)-4096:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// start runs cmd and waits until ready returns an endpoint, or timeout.
// ready reads the server's standard output.
func start(name string, cmd *exec.Cmd, timeout time.Duration, ready func(stdout io.Reader) (string, error)) (*serverProc, error) {
	s := &serverProc{name: name, cmd: cmd, done: make(chan struct{}), errOut: &tailBuffer{}}
	cmd.Stderr = s.errOut
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { cmd.Wait(); close(s.done) }()
	type result struct {
		endpoint string
		err      error
	}
	rc := make(chan result, 1)
	go func() {
		ep, err := ready(out)
		rc <- result{ep, err}
		io.Copy(io.Discard, out) // keep the pipe drained
	}()
	select {
	case r := <-rc:
		if r.err != nil {
			s.stop()
			return nil, fmt.Errorf("%s: %v; stderr: %s", name, r.err, s.errOut)
		}
		s.endpoint, s.startup = r.endpoint, time.Since(t0)
		return s, nil
	case <-s.done:
		return nil, fmt.Errorf("%s exited before it was ready: %v; stderr: %s", name, cmd.ProcessState, s.errOut)
	case <-time.After(timeout):
		s.stop()
		return nil, fmt.Errorf("%s not ready after %v; stderr: %s", name, timeout, s.errOut)
	}
}

var readyLine = regexp.MustCompile(`ready \((https?://[^/\s]+)`)

// buildLocaltable builds the localtable command of the repository at root
// into dir.
func buildLocaltable(root, dir string) (string, error) {
	bin := filepath.Join(dir, "localtable")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/localtable")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building cmd/localtable: %v\n%s", err, out)
	}
	return bin, nil
}

// startLocaltable runs the localtable server on a free loopback port, in
// memory, or on pebble under location, with the flags extra too.
func startLocaltable(name, bin, location string, extra ...string) (*serverProc, error) {
	args := []string{"--addr", "127.0.0.1:0", "--log-level", "warn"}
	if location != "" {
		args = append(args, "--location", location)
	}
	args = append(args, extra...)
	return start(name, exec.Command(bin, args...), 30*time.Second, func(r io.Reader) (string, error) {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if m := readyLine.FindStringSubmatch(sc.Text()); m != nil {
				return m[1] + "/" + server.DevAccountName, nil
			}
		}
		return "", errors.New("no ready line on its output")
	})
}

// azurite is an installed Azurite: the script of its table service and
// its version.
type azurite struct {
	script, version, node string
}

// pinnedAzurite returns the Azurite version package.json pins.
func pinnedAzurite(benchDir string) (string, error) {
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	b, err := os.ReadFile(filepath.Join(benchDir, "package.json"))
	if err != nil {
		return "", err
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		return "", fmt.Errorf("package.json: %v", err)
	}
	v := pkg.Dependencies["azurite"]
	if v == "" {
		return "", errors.New("package.json: no azurite dependency")
	}
	return v, nil
}

// installedVersion returns the version of the package in node_modules, or
// "".
func installedVersion(benchDir, pkg string) string {
	var p struct{ Version string }
	b, err := os.ReadFile(filepath.Join(benchDir, "node_modules", pkg, "package.json"))
	if err != nil || json.Unmarshal(b, &p) != nil {
		return ""
	}
	return p.Version
}

// setupAzurite installs the pinned Azurite into benchDir/node_modules with
// npm ci (from the committed package-lock.json) unless it is there
// already. It returns a reason to skip when node or npm is missing or the
// install fails.
func setupAzurite(benchDir string, timeout time.Duration, logf func(string, ...any)) (*azurite, string) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, "node not found: the Azurite column is skipped (install Node.js and npm to measure it)"
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return nil, "npm not found: the Azurite column is skipped (install npm to measure it)"
	}
	want, err := pinnedAzurite(benchDir)
	if err != nil {
		return nil, "Azurite skipped: " + err.Error()
	}
	if installedVersion(benchDir, "azurite") != want {
		logf("installing azurite %s with npm ci into %s", want, filepath.Join(benchDir, "node_modules"))
		t0 := time.Now()
		c, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cmd := exec.CommandContext(c, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = benchDir
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Sprintf("Azurite skipped: npm ci failed after %.0fs: %v: %s", time.Since(t0).Seconds(), err, lastLines(string(out), 5))
		}
		logf("installed azurite in %.1fs", time.Since(t0).Seconds())
		if got := installedVersion(benchDir, "azurite"); got != want {
			return nil, fmt.Sprintf("Azurite skipped: npm ci installed azurite %q, want %s", got, want)
		}
	}
	ver, _ := exec.Command(node, "--version").Output()
	return &azurite{
		script:  filepath.Join(benchDir, "node_modules", "azurite", "dist", "src", "table", "main.js"),
		version: want,
		node:    strings.TrimSpace(string(ver)),
	}, ""
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// freePort returns a loopback port that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// startAzurite runs Azurite's table service in memory on a free loopback
// port, with its telemetry off, and waits until it accepts connections.
// It runs in workDir (in memory, it takes no --location).
func startAzurite(az *azurite, workDir string) (*serverProc, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("node", az.script,
		"--inMemoryPersistence", "--disableTelemetry", "--silent", "--loose", "--skipApiVersionCheck",
		"--tableHost", "127.0.0.1", "--tablePort", strconv.Itoa(port))
	cmd.Dir = workDir
	addr := "127.0.0.1:" + strconv.Itoa(port)
	s, err := start(hAzurit, cmd, 60*time.Second, func(io.Reader) (string, error) {
		for t0 := time.Now(); time.Since(t0) < time.Minute; {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				c.Close()
				return "http://" + addr + "/" + server.DevAccountName, nil
			}
			time.Sleep(50 * time.Millisecond)
		}
		return "", errors.New("not accepting connections")
	})
	if err != nil {
		return nil, err
	}
	s.version = "azurite " + az.version + " (node " + az.node + ")"
	return s, nil
}
