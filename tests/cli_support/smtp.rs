//! A real SMTP server for the mail tests: Debian's aiosmtpd on 127.0.0.1, delivering
//! every mail it receives into a Maildir.
//!
//! The server binds port 0 itself and reports the port it got, so no other process
//! can take the port between a choice and the bind, and nothing is sent before it
//! listens.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// The server: aiosmtpd's SMTP protocol and Maildir handler on a socket bound to port
/// 0; the port is printed once it listens.
const SERVER: &str = r#"
import asyncio, sys
from aiosmtpd.handlers import Mailbox
from aiosmtpd.smtp import SMTP

async def main():
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: SMTP(Mailbox(sys.argv[1])), "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    await server.serve_forever()

asyncio.run(main())
"#;

/// How long the server may take to start on a busy machine.
const START: Duration = Duration::from_secs(60);

/// An aiosmtpd server on 127.0.0.1 delivering every mail into a Maildir; killed on drop.
pub struct Smtp {
    child: Child,
    pub port: u16,
    /// Where the server delivers every mail it receives.
    pub maildir: PathBuf,
}

impl Smtp {
    /// Starts one, or says why it cannot.
    pub fn start(dir: &Path) -> Result<Smtp, String> {
        let maildir = dir.join("smtp-received");
        let mut child = Command::new("/usr/bin/python3")
            .args(["-c", SERVER])
            .arg(&maildir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot run /usr/bin/python3: {e}"))?;
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let read = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(read.map(|_| line));
        });
        let mut server = Smtp {
            child,
            port: 0,
            maildir,
        };
        let line = match rx.recv_timeout(START) {
            Ok(Ok(line)) => line,
            Ok(Err(e)) => return Err(format!("cannot read the server's port: {e}")),
            Err(_) => return Err(format!("aiosmtpd did not listen within {} s", START.as_secs())),
        };
        server.port = line.trim().parse().map_err(|_| {
            let status = server.child.try_wait().ok().flatten();
            format!("aiosmtpd did not start (is python3-aiosmtpd installed?): exit {status:?}")
        })?;
        Ok(server)
    }

    /// The server's address, as `--smtp` takes it.
    pub fn at(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Stops the server; mail sent after this is refused.
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Smtp {
    fn drop(&mut self) {
        self.stop();
    }
}
