"""``host-net``: a host's backend network as netplan, NetworkManager keyfiles and sysctl.d."""
