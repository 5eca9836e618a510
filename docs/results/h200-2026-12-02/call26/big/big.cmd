$ BLOCKSWEEP_TRACE=1 blocksweep sweep --device H200 --size 50000x50000 --blocks 256,1024 --warmups 1 --reps 3 --no-copy
exit 1
