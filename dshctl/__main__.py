from dshctl.cli.app import program

if __name__ == "__main__":
    program()
