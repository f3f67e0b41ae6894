package wireshark
