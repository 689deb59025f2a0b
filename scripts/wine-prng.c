/* ProcessPrng, the one export of Windows' bcryptprimitives.dll that Rust's standard
 * library (1.78 and later) imports, for Wine releases that lack the DLL (Debian 12's
 * Wine 8). scripts/windows-wine.sh builds it with MinGW into the Wine prefix it runs
 * the library's Windows tests in; it fills the buffer from RtlGenRandom (advapi32's
 * SystemFunction036), which Wine has. Not part of md5x. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG n = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!SystemFunction036(data, n))
            return FALSE;
        data += n;
        len -= n;
    }
    return TRUE;
}
