/**
 * The runner inside a session's sandbox when perl is installed (Debian's
 * perl-base is essential, so it nearly always is): the same protocol as
 * `NODE_RUNNER_SCRIPT` (see runner-script.ts), run as `perl -e RUNNER graceMs
 * filter prctl [socket port]` (the filter in hex, `-` for none, and the
 * prctl call's number). It starts in a few milliseconds where node takes some
 * sixty, so a session's first command, which often arrives while the sandbox
 * is still starting, does not wait for it. Only perl's built-ins are used (no
 * module but `Socket`, loaded for the bridge alone).
 *
 * Each command has a waiter: the runner forks it, it forks the command (which
 * makes its own process group, enters its cwd, takes its environment and
 * installs the unix-socket filter, execs `bash -c`), writes `pid N` on a status pipe, waits for it and writes
 * `exit CODE -` or `exit - SIGNAL`. So the runner learns of a shell's exit
 * from a pipe, never from SIGCHLD (whose delivery could slip past its
 * `select`), and its children reap themselves. A command is closed once its
 * stdout, stderr and status pipes have all ended. The kill after the grace
 * period is a forked process that sleeps, then SIGKILLs the group (at once,
 * with no grace, when no process can be forked: a fork bomb at the limit).
 * When stdin ends the runner exits, and with it, bubblewrap's init and so
 * every process in the sandbox's PID namespace. With a socket, each
 * connection to the bridge is relayed by a process of its own.
 */
export const PERL_RUNNER_SCRIPT = String.raw`
my ($grace, $filter, $prctl, $socket_path, $port) = @ARGV;
# The unix-socket filter (unix-socket-filter.ts), installed on each command before it runs:
# PR_SET_NO_NEW_PRIVS, then PR_SET_SECCOMP with a struct sock_fprog (a count, a pointer).
$filter = $filter eq '-' ? '' : pack('H*', $filter);
sub confine {
  return 1 if $filter eq '';
  return 0 unless syscall($prctl, 38, 1, 0, 0, 0) == 0;
  my $program = pack('S x6 P', length($filter) / 8, $filter);
  return syscall($prctl, 22, 2, $program, 0, 0) == 0;
}
$SIG{CHLD} = 'IGNORE';
my (%commands, %handles, $listener);
my ($requests, $out, $sent) = ('', '', 0);
# Events wait in $out and go out as rudder takes them, so a slow reader never stalls the
# commands' pipes (a command blocked mid-write on a full pipe would have its line cut).
sub put { $out .= $_[0]; }
sub writable { my $mask = ''; vec($mask, 1, 1) = 1; return select(undef, $mask, undef, 0) > 0; }
sub flush {
  # A pipe that polls writable has room for PIPE_BUF bytes: a write of that many never blocks.
  while ($sent < length $out && writable()) {
    my $n = syswrite STDOUT, $out, 4096, $sent;
    exit 0 unless defined $n;
    $sent += $n;
  }
  if ($sent == length $out) { ($out, $sent) = ('', 0); }
  elsif ($sent > 1048576) { $out = substr($out, $sent); $sent = 0; }
}
sub text { my $s = shift; $s =~ s/(["\\])/\\$1/g; $s =~ s/([\x00-\x1f])/sprintf('\\u%04x', ord $1)/ge; return "\"$s\""; }
sub event { my ($type, $id, $rest) = @_; put('{"type":"' . $type . '","id":' . $id . ($rest // '') . "}\n"); }
sub terminate {
  my $command = $commands{$_[0]} or return;
  my $group = delete $command->{group} or return;
  kill('TERM', -$group) or return;
  my $killer = fork;
  # No process to wait out the grace period (the sandbox is at its process limit, a fork bomb
  # in it): SIGKILL at once, as nothing else would.
  unless (defined $killer) { kill('KILL', -$group); return; }
  if ($killer == 0) { select(undef, undef, undef, $grace / 1000); kill('KILL', -$group); exit 0; }
}
sub finish {
  my ($id, $command) = @_;
  return if --$command->{open} > 0;
  delete $commands{$id};
  event('close', $id);
}
sub status {
  my ($id, $command, $line) = @_;
  if ($line =~ /^pid (\d+)$/ && $1 > 1) { $command->{group} = $1; terminate($id) if $command->{doomed}; }
  elsif ($line =~ /^error (.*)$/s) { event('error', $id, ',"message":' . text($1)); }
  elsif ($line =~ /^exit (\S+) (\S+)$/) {
    event('exit', $id, ',"code":' . ($1 eq '-' ? 'null' : $1) . ',"signal":' . ($2 eq '-' ? 'null' : $2));
    terminate($id);
  }
}
sub run {
  my ($id, $cwd, $line, @env) = @_;
  my ($out_r, $out_w, $err_r, $err_w, $status_r, $status_w);
  unless (pipe($out_r, $out_w) && pipe($err_r, $err_w) && pipe($status_r, $status_w)) {
    event('error', $id, ',"message":' . text("cannot make pipes: $!"));
    event('close', $id);
    return;
  }
  # F_SETPIPE_SZ: a megabyte, as much as a socket pair's buffer and more, so that a command's
  # write is seldom cut by a full pipe and read in two pieces with the other stream's between.
  fcntl($_, 1031, 1048576) for $out_r, $err_r;
  my $waiter = fork;
  if (defined $waiter && $waiter == 0) {
    $SIG{CHLD} = 'DEFAULT';
    close $_ for $out_r, $err_r, $status_r, map { $_->[0] } values %handles;
    close $listener if $listener;
    open(STDIN, '<', '/dev/null');
    open(STDOUT, '>', '/dev/null');
    my $child = fork;
    if (defined $child && $child == 0) {
      setpgrp(0, 0);
      open(STDIN, '<', '/dev/null');
      open(STDOUT, '>&', $out_w);
      open(STDERR, '>&', $err_w);
      unless (chdir $cwd) { (my $shown = $cwd) =~ s/\n/\\n/g; syswrite $status_w, "error cannot enter $shown: $!\n"; exit 127; }
      %ENV = map { /^([^=]*)=(.*)$/s ? ($1, $2) : () } @env;
      unless (confine()) { syswrite $status_w, "error cannot shut unix sockets away: $!\n"; exit 127; }
      { exec 'bash', '-c', $line; }
      syswrite $status_w, "error cannot run bash: $!\n";
      exit 127;
    }
    close $_ for $out_w, $err_w;
    unless (defined $child) { syswrite $status_w, "error cannot fork: $!\n"; exit 0; }
    syswrite $status_w, "pid $child\n";
    waitpid($child, 0);
    my $signal = $? & 127;
    syswrite $status_w, $signal ? "exit - $signal\n" : 'exit ' . ($? >> 8) . " -\n";
    exit 0;
  }
  close $_ for $out_w, $err_w, $status_w;
  unless (defined $waiter) {
    event('error', $id, ',"message":' . text("cannot fork: $!"));
    event('close', $id);
    return;
  }
  my $command = $commands{$id} = { open => 3 };
  $handles{fileno $out_r} = [$out_r, $id, 1];
  $handles{fileno $err_r} = [$err_r, $id, 2];
  $handles{fileno $status_r} = [$status_r, $id, 0, ''];
}
sub request {
  for (;;) {
    my $end = index($requests, "\n");
    return if $end < 0;
    my ($type, $id, $length) = split / /, substr($requests, 0, $end);
    if ($type eq 'run') {
      return if length($requests) < $end + 1 + $length;
      my $payload = substr($requests, $end + 1, $length);
      substr($requests, 0, $end + 1 + $length) = '';
      run($id, split(/\0/, $payload, -1));
    } else {
      substr($requests, 0, $end + 1) = '';
      if ($type eq 'terminate') {
        my $command = $commands{$id};
        if ($command && !defined $command->{group}) { $command->{doomed} = 1; } else { terminate($id); }
      }
    }
  }
}
sub relay {
  my ($client) = @_;
  my $pid = fork;
  if (!defined $pid || $pid != 0) { close $client; return; }
  open(STDIN, '<', '/dev/null');
  open(STDOUT, '>', '/dev/null');
  close $_->[0] for values %handles;
  close $listener;
  my $upstream;
  exit 0 unless socket($upstream, Socket::PF_UNIX(), Socket::SOCK_STREAM(), 0)
    && connect($upstream, Socket::pack_sockaddr_un($socket_path));
  my %peer = (fileno $client => [$client, $upstream], fileno $upstream => [$upstream, $client]);
  while (%peer) {
    my $mask = '';
    vec($mask, $_, 1) = 1 for keys %peer;
    next if select(my $ready = $mask, undef, undef, undef) <= 0;
    for my $fd (keys %peer) {
      next unless vec($ready, $fd, 1);
      my ($from, $to) = @{$peer{$fd}};
      my $n = sysread $from, my $data, 65536;
      exit 0 unless defined $n;
      if ($n == 0) { shutdown($to, 1); delete $peer{$fd}; next; }
      while (length $data) { my $w = syswrite $to, $data; exit 0 unless $w; substr($data, 0, $w) = ''; }
    }
  }
  exit 0;
}
if (defined $socket_path) {
  require Socket;
  socket($listener, Socket::PF_INET(), Socket::SOCK_STREAM(), 0) or die "bridge: $!";
  setsockopt($listener, Socket::SOL_SOCKET(), Socket::SO_REUSEADDR(), 1);
  bind($listener, Socket::pack_sockaddr_in($port, Socket::inet_aton('127.0.0.1'))) or die "bridge: $!";
  listen($listener, 128) or die "bridge: $!";
}
put('{"type":"ready","id":0}' . "\n");
for (;;) {
  my $mask = '';
  vec($mask, 0, 1) = 1;
  vec($mask, fileno $listener, 1) = 1 if $listener;
  vec($mask, $_, 1) = 1 for keys %handles;
  my $waiting = '';
  vec($waiting, 1, 1) = 1 if length $out;
  next if select(my $ready = $mask, $waiting, undef, undef) <= 0;
  if (vec($ready, 0, 1)) {
    my $n = sysread STDIN, my $data, 65536;
    exit 0 unless $n;
    $requests .= $data;
    request();
  }
  if ($listener && vec($ready, fileno $listener, 1)) { my $client; relay($client) if accept($client, $listener); }
  for my $fd (sort { $a <=> $b } keys %handles) {
    next unless vec($ready, $fd, 1);
    my $entry = $handles{$fd} or next;
    my ($handle, $id, $stream) = @$entry;
    my $command = $commands{$id};
    # As libuv does, read on until the pipe is empty: a write cut by a full pipe is then read
    # whole before the other stream's next chunk, so lines stay whole in the merged output.
    my ($data, $ended) = ('', 0);
    for my $read (1 .. 32) {
      my $n = sysread $handle, $data, 65536, length $data;
      if (!$n) { $ended = 1; last; }
      my $more = '';
      vec($more, $fd, 1) = 1;
      last unless select($more, undef, undef, 0) > 0;
    }
    if (length $data) {
      if ($stream) { put('{"type":"data","id":' . $id . ',"stream":' . $stream . ',"length":' . length($data) . "}\n" . $data); }
      else {
        $entry->[3] .= $data;
        while ($entry->[3] =~ s/^([^\n]*)\n//) { status($id, $command, $1); }
      }
    }
    next unless $ended;
    delete $handles{$fd};
    close $handle;
    status($id, $command, $entry->[3]) if $stream == 0 && length $entry->[3];
    finish($id, $command);
  }
  flush();
}
`;
