//! The few Linux calls mc-cell needs beyond std (it has no dependencies and links libc
//! statically): identity changes, capability bounding, dumpability, tracing, per-thread
//! credentials and descriptor passing over unix sockets.
//!
//! Contract: every function here is a thin wrapper that returns the OS error; none of them
//! allocates between `fork` and `exec` except where its doc says so.

use std::io;
use std::os::fd::RawFd;

unsafe extern "C" {
    fn prctl(option: i32, ...) -> i32;
    fn setgroups(size: usize, list: *const u32) -> i32;
    fn setgid(gid: u32) -> i32;
    fn setuid(uid: u32) -> i32;
    fn getuid() -> u32;
    fn syscall(number: i64, ...) -> i64;
    fn ptrace(request: i32, ...) -> i64;
    fn kill(pid: i32, signal: i32) -> i32;
    fn sendmsg(fd: i32, message: *const MessageHeader, flags: i32) -> isize;
    fn recvmsg(fd: i32, message: *mut MessageHeader, flags: i32) -> isize;
    fn getsockopt(fd: i32, level: i32, name: i32, value: *mut u8, length: *mut u32) -> i32;
    fn fork() -> i32;
    fn execve(path: *const i8, argv: *const *const i8, envp: *const *const i8) -> i32;
    fn dup2(old: i32, new: i32) -> i32;
    fn chdir(path: *const i8) -> i32;
    fn setsid() -> i32;
    fn _exit(code: i32) -> !;
}

const PR_SET_DUMPABLE: i32 = 4;
const PR_CAPBSET_DROP: i32 = 24;
const SOL_SOCKET: i32 = 1;
const SCM_RIGHTS: i32 = 1;
const SO_PEERCRED: i32 = 17;
/// `PTRACE_SEIZE` and `PTRACE_INTERRUPT` (the attack `doctor --sandbox` and the tests try).
pub const PTRACE_SEIZE: i32 = 0x4206;
pub const PTRACE_INTERRUPT: i32 = 0x4207;
pub const SIGKILL: i32 = 9;
pub const SIGSTOP: i32 = 19;

#[cfg(target_arch = "x86_64")]
const SYS_SETRESUID: i64 = 117;
#[cfg(target_arch = "x86_64")]
const SYS_SETRESGID: i64 = 119;
#[cfg(target_arch = "x86_64")]
const SYS_SETGROUPS: i64 = 116;
#[cfg(target_arch = "aarch64")]
const SYS_SETRESUID: i64 = 147;
#[cfg(target_arch = "aarch64")]
const SYS_SETRESGID: i64 = 149;
#[cfg(target_arch = "aarch64")]
const SYS_SETGROUPS: i64 = 159;

fn check(result: i64) -> io::Result<()> {
    if result < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// The real uid of this process.
pub fn uid() -> u32 {
    unsafe { getuid() }
}

/// Makes this process non-dumpable: its /proc files belong to root and nothing without
/// CAP_SYS_PTRACE can trace it or open its descriptors.
pub fn set_undumpable() -> io::Result<()> {
    check(unsafe { prctl(PR_SET_DUMPABLE, 0u64, 0u64, 0u64, 0u64) }.into())
}

/// Becomes `uid:gid` with no supplementary groups and an empty capability bounding set, for
/// good: the capability sets of a non-root uid are cleared by the kernel on `setuid`.
/// Async-signal-safe (for use between `fork` and `exec`).
pub fn become_user(uid: u32, gid: u32) -> io::Result<()> {
    for capability in 0..64u64 {
        // EINVAL past the last capability the kernel knows; EPERM without CAP_SETPCAP, in
        // which case the bounding set is the engine's (and no-new-privileges still holds).
        unsafe { prctl(PR_CAPBSET_DROP, capability, 0u64, 0u64, 0u64) };
    }
    check(unsafe { setgroups(0, std::ptr::null()) }.into())?;
    check(unsafe { setgid(gid) }.into())?;
    check(unsafe { setuid(uid) }.into())?;
    if unsafe { getuid() } != uid {
        return Err(io::Error::from_raw_os_error(1)); // EPERM, without allocating
    }
    Ok(())
}

/// Stays root with exactly the capabilities of `keep` (a mask of capability numbers) in the
/// bounding set and no supplementary groups: after `exec` the program's capabilities are those
/// (no-new-privileges keeps them within what the engine gave). The task profile only.
/// Async-signal-safe (for use between `fork` and `exec`).
pub fn become_task_root(keep: u64) -> io::Result<()> {
    for capability in 0..64u64 {
        if keep & (1 << capability) == 0 {
            unsafe { prctl(PR_CAPBSET_DROP, capability, 0u64, 0u64, 0u64) };
        }
    }
    check(unsafe { setgroups(0, std::ptr::null()) }.into())
}

/// Changes the credentials of the calling thread only (raw system calls, not libc's
/// process-wide wrappers): the thread can then act with exactly `uid`'s rights. One-way.
pub fn thread_become(uid: u32, gid: u32) -> io::Result<()> {
    let (uid, gid) = (i64::from(uid), i64::from(gid));
    check(unsafe { syscall(SYS_SETGROUPS, 0i64, 0i64) })?;
    check(unsafe { syscall(SYS_SETRESGID, gid, gid, gid) })?;
    check(unsafe { syscall(SYS_SETRESUID, uid, uid, uid) })
}

/// `kill(pid, signal)`.
pub fn signal(pid: i32, signal: i32) -> io::Result<()> {
    check(unsafe { kill(pid, signal) }.into())
}

/// `ptrace(PTRACE_SEIZE, pid)` then `ptrace(PTRACE_INTERRUPT, pid)`: what a cell would do
/// to freeze its init.
pub fn seize_and_interrupt(pid: i32) -> io::Result<()> {
    check(unsafe { ptrace(PTRACE_SEIZE, pid, 0u64, 0u64) })?;
    check(unsafe { ptrace(PTRACE_INTERRUPT, pid, 0u64, 0u64) })
}

/// `ptrace(PTRACE_DETACH, pid)`: undoes a seize that should not have worked.
pub fn detach(pid: i32) {
    unsafe { ptrace(17, pid, 0u64, 0u64) };
}

/// The uid of the process at the other end of a unix stream socket.
pub fn peer_uid(fd: RawFd) -> io::Result<u32> {
    // struct ucred { pid_t pid; uid_t uid; gid_t gid; }
    let mut credentials = [0u8; 12];
    let mut length = 12u32;
    check(
        unsafe {
            getsockopt(
                fd,
                SOL_SOCKET,
                SO_PEERCRED,
                credentials.as_mut_ptr(),
                &raw mut length,
            )
        }
        .into(),
    )?;
    Ok(u32::from_ne_bytes([
        credentials[4],
        credentials[5],
        credentials[6],
        credentials[7],
    ]))
}

#[repr(C)]
struct IoVector {
    base: *mut u8,
    length: usize,
}

#[repr(C)]
struct MessageHeader {
    name: *mut u8,
    name_length: u32,
    iov: *mut IoVector,
    iov_length: usize,
    control: *mut u8,
    control_length: usize,
    flags: i32,
}

/// `struct cmsghdr` is a `size_t` length and two ints; the data follows, aligned to size_t.
const HEADER: usize = std::mem::size_of::<usize>() + 8;

/// Sends one byte with three descriptors attached (`SCM_RIGHTS`).
pub fn send_fds(socket: RawFd, fds: [RawFd; 3]) -> io::Result<()> {
    let mut byte = [b'F'];
    let mut vector = IoVector {
        base: byte.as_mut_ptr(),
        length: 1,
    };
    let mut control = [0u64; 8];
    let control_bytes = control.as_mut_ptr().cast::<u8>();
    let length = HEADER + 12;
    unsafe {
        control_bytes.cast::<usize>().write(length);
        control_bytes.add(8).cast::<i32>().write(SOL_SOCKET);
        control_bytes.add(12).cast::<i32>().write(SCM_RIGHTS);
        for (i, fd) in fds.iter().enumerate() {
            control_bytes.add(HEADER + 4 * i).cast::<i32>().write(*fd);
        }
    }
    let message = MessageHeader {
        name: std::ptr::null_mut(),
        name_length: 0,
        iov: &raw mut vector,
        iov_length: 1,
        control: control_bytes,
        control_length: (length + 7) & !7,
        flags: 0,
    };
    check(unsafe { sendmsg(socket, &raw const message, 0) } as i64)
}

/// Receives the byte and the three descriptors [`send_fds`] sent.
pub fn receive_fds(socket: RawFd) -> io::Result<[RawFd; 3]> {
    let mut byte = [0u8];
    let mut vector = IoVector {
        base: byte.as_mut_ptr(),
        length: 1,
    };
    let mut control = [0u64; 8];
    let control_bytes = control.as_mut_ptr().cast::<u8>();
    let mut message = MessageHeader {
        name: std::ptr::null_mut(),
        name_length: 0,
        iov: &raw mut vector,
        iov_length: 1,
        control: control_bytes,
        control_length: 64,
        flags: 0,
    };
    check(unsafe { recvmsg(socket, &raw mut message, 0x4000_0000) } as i64)?; // MSG_CMSG_CLOEXEC
    let (length, level, kind) = unsafe {
        (
            control_bytes.cast::<usize>().read(),
            control_bytes.add(8).cast::<i32>().read(),
            control_bytes.add(12).cast::<i32>().read(),
        )
    };
    if message.control_length < HEADER + 12
        || length != HEADER + 12
        || level != SOL_SOCKET
        || kind != SCM_RIGHTS
    {
        return Err(io::Error::other("expected three descriptors"));
    }
    let mut fds = [0; 3];
    for (i, fd) in fds.iter_mut().enumerate() {
        *fd = unsafe { control_bytes.add(HEADER + 4 * i).cast::<i32>().read() };
    }
    Ok(fds)
}

/// What a raw fork needs, prepared before forking (no allocation after it).
pub struct Exec {
    /// Program path.
    pub path: std::ffi::CString,
    /// argv, NUL-terminated pointers kept alive by `strings`.
    pub strings: Vec<std::ffi::CString>,
    /// Environment `NAME=VALUE` strings.
    pub env: Vec<std::ffi::CString>,
    /// Working directory.
    pub cwd: std::ffi::CString,
    /// Descriptors that become 0, 1 and 2.
    pub stdio: [RawFd; 3],
    /// Identity.
    pub uid: u32,
    /// Group.
    pub gid: u32,
}

/// Forks; the child takes `exec.stdio` as 0-2, starts a session, changes directory, becomes
/// `exec.uid` and runs the program (exit 127 when any step fails). Returns the child's pid.
pub fn spawn_as(exec: &Exec) -> io::Result<i32> {
    let mut argv: Vec<*const i8> = exec.strings.iter().map(|s| s.as_ptr()).collect();
    argv.push(std::ptr::null());
    let mut envp: Vec<*const i8> = exec.env.iter().map(|s| s.as_ptr()).collect();
    envp.push(std::ptr::null());
    let pid = unsafe { fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid > 0 {
        return Ok(pid);
    }
    unsafe {
        for (target, fd) in exec.stdio.iter().enumerate() {
            // dup2 clears close-on-exec on the copy.
            if dup2(*fd, target as i32) < 0 {
                _exit(127);
            }
        }
        setsid();
        if chdir(exec.cwd.as_ptr()) < 0 || become_user(exec.uid, exec.gid).is_err() {
            _exit(127);
        }
        execve(exec.path.as_ptr(), argv.as_ptr(), envp.as_ptr());
        _exit(127)
    }
}
