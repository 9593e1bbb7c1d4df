/*
 * 1 KiB of initial-exec thread-locals linked into a copy of the agent
 * (the Makefile's tlspad target), so that t_agent_load can make an agent
 * that does not fit glibc's static TLS surplus: the agent's own
 * thread-locals are a few words, within the smallest surplus glibc's
 * tunables allow.
 */
__attribute__((used, tls_model("initial-exec"))) __thread char corscope_tls_pad[1024];
