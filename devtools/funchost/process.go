package funchost

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"time"
)

// handlerProcess is a running custom handler.
type handlerProcess struct {
	cmd     *exec.Cmd
	port    int
	done    chan struct{} // closed when the process has exited
	waitErr error
	output  *tail
	copying chan struct{} // closed when stdout and stderr are drained
}

// baseEnv are the variables passed from the host's own environment when the settings do not
// set them, so that a handler finds its tools and temp directory.
var baseEnv = []string{"PATH", "HOME", "TMPDIR", "TZ", "LANG"}

// startHandler starts an app's executable with FUNCTIONS_CUSTOMHANDLER_PORT on a free port
// and the app settings as its environment, and waits until GET / answers.
// Errors: the executable is missing or not executable, the process exits before it is ready
// (with the tail of its output), or it does not answer within timeout.
func startHandler(ctx context.Context, a *app, settings map[string]string, log *logger, timeout time.Duration) (*handlerProcess, error) {
	desc := a.host.CustomHandler.Description
	exe := desc.DefaultExecutablePath
	if !filepath.IsAbs(exe) {
		exe = filepath.Join(a.dir, exe)
	}
	if st, err := os.Stat(exe); err != nil {
		return nil, fmt.Errorf("app %s: handler executable: %w", a.name, err)
	} else if st.IsDir() || st.Mode()&0o111 == 0 {
		return nil, fmt.Errorf("app %s: handler %s is not an executable file", a.name, exe)
	}
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("app %s: find a free port: %w", a.name, err)
	}
	cmd := exec.Command(exe, desc.Arguments...)
	cmd.Dir = a.dir
	if wd := desc.WorkingDirectory; wd != "" {
		if !filepath.IsAbs(wd) {
			wd = filepath.Join(a.dir, wd)
		}
		cmd.Dir = wd
	}
	cmd.Env = handlerEnv(settings, port, a.dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("app %s: start %s: %w", a.name, exe, err)
	}
	p := &handlerProcess{cmd: cmd, port: port, done: make(chan struct{}), output: &tail{max: 20}, copying: make(chan struct{})}
	log.printf("[host] app %s: started %s (pid %d) on port %d", a.name, exe, cmd.Process.Pid, port)
	copied := make(chan struct{}, 2)
	for _, r := range []io.Reader{stdout, stderr} {
		go func(r io.Reader) {
			sc := bufio.NewScanner(r)
			sc.Buffer(make([]byte, 64*1024), 1024*1024)
			for sc.Scan() {
				p.output.add(sc.Text())
				log.printf("[%s] %s", a.name, sc.Text())
			}
			_, _ = io.Copy(io.Discard, r)
			copied <- struct{}{}
		}(r)
	}
	go func() {
		<-copied
		<-copied
		close(p.copying)
	}()
	go func() {
		<-p.copying // Wait closes the pipes: read them to the end first
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	if err := p.waitReady(ctx, timeout); err != nil {
		p.stop()
		return nil, fmt.Errorf("app %s: %w", a.name, err)
	}
	return p, nil
}

func (p *handlerProcess) baseURL() string { return "http://127.0.0.1:" + strconv.Itoa(p.port) }

// waitReady pings GET / until any HTTP response arrives.
func (p *handlerProcess) waitReady(ctx context.Context, timeout time.Duration) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(timeout)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.baseURL()+"/", nil)
		if resp, err := client.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("handler exited before it answered GET / (%v); its last output:\n%s", p.waitErr, p.output)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("handler did not answer GET / on port %d within %s; its last output:\n%s", p.port, timeout, p.output)
		}
	}
}

// stop sends SIGTERM to the handler's process group, then SIGKILL after five seconds.
func (p *handlerProcess) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
	}
}

// exited reports whether the handler has exited, and how.
func (p *handlerProcess) exited() (bool, error) {
	select {
	case <-p.done:
		if p.waitErr == nil {
			return true, errors.New("exit status 0")
		}
		return true, p.waitErr
	default:
		return false, nil
	}
}

func handlerEnv(settings map[string]string, port int, dir string) []string {
	env := map[string]string{}
	for _, k := range baseEnv {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	for k, v := range settings {
		env[k] = v
	}
	env["FUNCTIONS_CUSTOMHANDLER_PORT"] = strconv.Itoa(port)
	env["FUNCTIONS_WORKER_RUNTIME"] = "custom"
	env["AzureWebJobsScriptRoot"] = dir
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, k+"="+env[k])
	}
	return out
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
